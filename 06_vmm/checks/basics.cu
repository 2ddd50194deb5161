// Checks of section basics: runs the steps of ../basics.cu on a little over 300 MiB, narrates
// them, has kernels use the range (a child first), and reads the free device memory throughout.
#include "06_vmm/basics.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::format;
using tutorial::format_bytes;

namespace {

// Steps 1 to 4 as they happened.
void narrate_steps(const Mapping& m, std::size_t wanted, int device) {
    std::printf("1. cuMemCreate: %zu bytes wanted, rounded up to %s (granularity %s).\n", wanted,
                format_bytes(m.bytes).c_str(), format_bytes(m.granularity).c_str());
    std::printf("2. cuMemAddressReserve: %s of addresses at 0x%llx, no memory behind them yet.\n",
                format_bytes(m.bytes).c_str(), static_cast<unsigned long long>(m.address));
    std::printf("3. cuMemMap: the physical memory now sits behind those addresses.\n");
    std::printf("4. cuMemSetAccess: device %d may read and write the range.\n", device);
}

// Step 7 (checked): true if the retained handle is the one the memory was mapped with, as the
// driver API reference promises for cuMemRetainAllocationHandle, and describes that memory.
bool retained_handle_matches(const Mapping& m) {
    CUmemAllocationProp readback{};
    const CUmemGenericAllocationHandle retained = handle_of(m.address + m.bytes / 2, &readback);
    std::printf(
        "7. cuMemRetainAllocationHandle on an address in the middle of the range: handle 0x%llx\n"
        "   (cuMemCreate gave 0x%llx); cuMemGetAllocationPropertiesFromHandle: type %s, device "
        "%d.\n",
        static_cast<unsigned long long>(retained), static_cast<unsigned long long>(m.memory),
        readback.type == CU_MEM_ALLOCATION_TYPE_PINNED ? "PINNED" : "other", readback.location.id);
    return retained == m.memory && readback.type == m.prop.type &&
           readback.location.id == m.prop.location.id;
}

// Steps 1 to 6 without the narration, for a child: if the lesson were wrong and cuMemRelease
// freed mapped memory, the kernel would end its process, not the section's.
std::size_t use_after_release(int device, std::size_t wanted) {
    const Mapping m = create_and_map(device, wanted);
    release_handle(m);
    const std::size_t wrong = use_range(m, 77);
    unmap_and_free(m);
    return wrong;
}

}  // namespace

// Child role: map, release the handle, and let kernels use the range.
int child_use_after_release(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const std::size_t wrong = use_after_release(device, std::strtoull(args.at(1).c_str(), 0, 10));
    std::printf("values wrong after cuMemRelease -> %zu\n", wrong);
    return 0;
}

tutorial::Result run_basics(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("VMM is not supported on this device");
    }
    const std::size_t wanted = ctx.size_or(ctx.quick() ? (3 << 20) : (300 << 20)) + 1;
    const std::size_t free_before = tutorial::free_device_memory();
    const Mapping m = create_and_map(ctx.device, wanted);
    narrate_steps(m, wanted, ctx.device);
    release_handle(m);
    std::printf("5. cuMemRelease right away: legal, the mapping keeps the memory alive.\n");

    // A child tries it first (its own mapping, the same steps): if the memory were gone, its
    // kernel would fault there, and this process would say so instead of crashing.
    const tutorial::ChildResult child = tutorial::run_child(
        "use_after_release", {std::to_string(ctx.device), std::to_string(wanted)});
    const bool child_ok = child.succeeded() &&
                          tutorial::child_answer(child, "values wrong after cuMemRelease") == "0";
    const std::size_t count = m.bytes / sizeof(std::uint32_t);
    const std::size_t wrong = child_ok ? use_range(m, 77) : count;
    std::printf(
        "6. A kernel filled the range and another checked it: %zu of %zu values wrong (a child\n"
        "   did the same first: it %s).\n",
        wrong, count, child.describe().c_str());
    const bool same_properties = retained_handle_matches(m);

    const std::size_t free_mapped = tutorial::free_device_memory();
    unmap_and_free(m);
    const std::size_t free_after = tutorial::free_device_memory();
    std::printf(
        "8. cuMemUnmap, then cuMemAddressFree. Free device memory: %s before, %s while\n"
        "   mapped, %s after.\n",
        format_bytes(free_before).c_str(), format_bytes(free_mapped).c_str(),
        format_bytes(free_after).c_str());
    // Compared as differences only where they cannot wrap: another process may free memory too.
    const bool memory_used = free_before > free_mapped && free_before - free_mapped >= m.bytes;
    const bool memory_back = free_after + m.granularity >= free_before;
    std::printf("\n");
    ctx.claim(tutorial::documented(
        "after cuMemRelease the mapping alone keeps the memory: kernels use the range as usual",
        wrong == 0,
        format("%zu of %zu values wrong; the child %s", wrong, count, child.describe().c_str()),
        "cuMemRelease freed memory that was still mapped, or the access grant did not cover the "
        "whole range",
        "Driver API reference: cuMemRelease"));
    ctx.claim(tutorial::documented(
        "the handle can be had back from any address inside the mapped range", same_properties,
        same_properties ? "the same handle value, describing the memory of step 1"
                        : "another handle, or other memory",
        "the address given was outside the mapping",
        "Driver API reference: cuMemRetainAllocationHandle"));
    ctx.claim(tutorial::documented(
        "the physical memory is taken while mapped, and given back by the last cuMemUnmap",
        memory_used && memory_back,
        format("free memory fell by %s and came back to within %s",
               format_bytes(free_before > free_mapped ? free_before - free_mapped : 0).c_str(),
               format_bytes(free_before > free_after ? free_before - free_after : 0).c_str()),
        "another process allocated or freed device memory during the section",
        "Driver API reference: cuMemCreate, cuMemUnmap"));
    return ctx.verdict(wrong == 0 && same_properties && memory_used && memory_back,
                       "the mapped range held the kernel's data, the retained handle described "
                       "the same allocation, and unmapping gave the memory back");
}

TUTORIAL_SECTION(basics, run_basics);
TUTORIAL_CHILD(use_after_release, child_use_after_release);
