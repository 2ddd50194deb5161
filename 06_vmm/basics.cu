// Section `basics`: the VMM steps one at a time. Physical memory and addresses are created
// separately, joined by a mapping, and made usable by an access grant.
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/report.hpp"
#include "common/vmm.hpp"
#include "sections.hpp"

#include <cstdint>
#include <cstdio>

using namespace tutorial;

tutorial::Result run_basics(tutorial::Context& ctx) {
    if (!vmm_supported(ctx.device)) return ctx.skip("VMM is not supported on this device");
    const std::size_t granularity = vmm_granularity(ctx.device);
    const std::size_t wanted = ctx.size_or(ctx.quick() ? (3 << 20) : (300 << 20)) + 1;
    const std::size_t bytes = round_up(wanted, granularity);
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const std::size_t free_before = free_device_memory();

    std::printf("1. cuMemCreate: %zu bytes wanted, rounded up to %s (granularity %s).\n", wanted,
                format_bytes(bytes).c_str(), format_bytes(granularity).c_str());
    const CUmemAllocationProp prop = vmm_properties(ctx.device);
    const CUmemGenericAllocationHandle memory = vmm_create(prop, bytes);

    const CUdeviceptr address = vmm_reserve(bytes, 0);
    std::printf("2. cuMemAddressReserve: %s of addresses at 0x%llx, no memory behind them yet.\n",
                format_bytes(bytes).c_str(), static_cast<unsigned long long>(address));
    vmm_map(address, bytes, memory);
    std::printf("3. cuMemMap: the physical memory now sits behind those addresses.\n");
    vmm_set_access(address, bytes, ctx.device);
    std::printf("4. cuMemSetAccess: device %d may read and write the range.\n", ctx.device);

    // The mapping holds its own reference to the physical memory, so the handle can go now;
    // the memory is freed when the last mapping of it is removed.
    vmm_release(memory);
    std::printf("5. cuMemRelease right away: legal, the mapping keeps the memory alive.\n");

    auto* data = reinterpret_cast<std::uint32_t*>(address);
    fill_on_device(data, count, 77);
    const std::size_t wrong = mismatches_on_device(data, count, 77);
    std::printf("6. A kernel filled the range and another checked it: %zu of %zu values wrong.\n",
                wrong, count);

    // The handle can be had back from any mapped address.
    const auto cuMemRetainAllocationHandle = DRIVER_FUNCTION(cuMemRetainAllocationHandle);
    const auto cuMemGetAllocationPropertiesFromHandle =
        DRIVER_FUNCTION(cuMemGetAllocationPropertiesFromHandle);
    CUmemGenericAllocationHandle retained = 0;
    CU_CHECK(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(address + bytes / 2)));
    CUmemAllocationProp readback{};
    CU_CHECK(cuMemGetAllocationPropertiesFromHandle(&readback, retained));
    vmm_release(retained);  // retaining took a reference, so it is released like any handle
    const bool same_properties = readback.type == prop.type &&
                                 readback.location.type == prop.location.type &&
                                 readback.location.id == prop.location.id;
    std::printf(
        "7. cuMemRetainAllocationHandle on an address in the middle of the range, then\n"
        "   cuMemGetAllocationPropertiesFromHandle: type %s, location device %d, handle types "
        "0x%x.\n",
        readback.type == CU_MEM_ALLOCATION_TYPE_PINNED ? "PINNED" : "other", readback.location.id,
        static_cast<unsigned>(readback.requestedHandleTypes));

    const std::size_t free_mapped = free_device_memory();
    vmm_unmap(address, bytes);  // the last mapping goes: the physical memory is freed
    vmm_free(address, bytes);   // and the addresses are given back
    const std::size_t free_after = free_device_memory();
    std::printf(
        "8. cuMemUnmap, then cuMemAddressFree. Free device memory: %s before, %s while\n"
        "   mapped, %s after.\n",
        format_bytes(free_before).c_str(), format_bytes(free_mapped).c_str(),
        format_bytes(free_after).c_str());
    const bool memory_used = free_before - free_mapped >= bytes;
    const bool memory_back = free_after + granularity >= free_before;
    return ctx.verdict(wrong == 0 && same_properties && memory_used && memory_back,
                       "the mapped range held the kernel's data, the retained handle described "
                       "the same allocation, and unmapping gave the memory back");
}
