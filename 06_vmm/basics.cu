// Section basics: the VMM steps one at a time. Physical memory and addresses are created
// separately, joined by a mapping, made usable by an access grant, and torn down in reverse.
//   nvcc -std=c++17 -I. 06_vmm/basics.cu common/standalone.cu -o build/basics
//   (or in 06_vmm/: nvcc -std=c++17 -I.. basics.cu ../common/standalone.cu -o ../build/basics)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>

namespace {

// What the walkthrough found.
struct Found {
    std::size_t granularity = 0;     // sizes and offsets come in multiples of this
    std::size_t bytes = 0;           // what was asked for, rounded up to it
    CUdeviceptr address = 0;         // where the range was reserved
    std::size_t wrong = 0;           // values the kernels read back wrong (0 when right)
    bool same_handle = false;        // the handle had back from the middle of the range
    CUmemAllocationProp retained{};  // ...and the properties it reports
};

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step created{"physical memory created, with no address yet"};
constexpr tutorial::Step mapped{"addresses reserved, the memory mapped there, access granted"};
constexpr tutorial::Step in_use{"kernels use the range; its handle had back from its middle"};
constexpr tutorial::Step torn_down{"unmapped (the memory goes with it), the addresses given back"};

// The cu* names are local variables holding the driver's functions, looked up through the
// runtime (common/driver.hpp says why), with the names and types of <cuda.h>: the calls read as
// documented.
Found walkthrough(int device, std::size_t wanted) {
    const auto cuMemGetAllocationGranularity = DRIVER_FUNCTION(cuMemGetAllocationGranularity);
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    const auto cuMemRetainAllocationHandle = DRIVER_FUNCTION(cuMemRetainAllocationHandle);
    const auto cuMemGetAllocationPropertiesFromHandle =
        DRIVER_FUNCTION(cuMemGetAllocationPropertiesFromHandle);
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    Found found;

    // 1. Physical memory: what kind, in what granularity, then created. It has no address yet.
    CUmemGenericAllocationHandle memory = 0;
    {
        const tutorial::During during(created);
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;  // device memory that is never paged out
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;  // not shared with other processes
        CU_CHECK(cuMemGetAllocationGranularity(&found.granularity, &prop,
                                               CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        found.bytes = (wanted + found.granularity - 1) / found.granularity * found.granularity;
        CU_CHECK(cuMemCreate(&memory, found.bytes, &prop, 0));  // flags: 0, the only value
    }
    {
        const tutorial::During during(mapped);
        // 2. Addresses only: aligned to the granularity (what cuMemMap needs), no preferred
        //    address (0), flags 0. 3. The mapping puts the memory behind them, from offset 0.
        CU_CHECK(cuMemAddressReserve(&found.address, found.bytes, found.granularity, 0, 0));
        CU_CHECK(cuMemMap(found.address, found.bytes, 0, memory, 0));
        // 4. A mapping grants nothing: one descriptor lets this device read and write the range.
        CUmemAccessDesc access{};
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;  // who gets access: this device
        access.location.id = device;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        CU_CHECK(cuMemSetAccess(found.address, found.bytes, &access, 1));
        // 5. The mapping holds its own reference to the memory, so the handle can go at once.
        CU_CHECK(cuMemRelease(memory));
    }
    {
        const tutorial::During during(in_use);
        // 6. To kernels the range is ordinary device memory: one fills it, another checks it.
        auto* data = reinterpret_cast<std::uint32_t*>(found.address);
        fill_on_device(data, found.bytes / sizeof *data, 77);
        found.wrong = mismatches_on_device(data, found.bytes / sizeof *data, 77);
        // 7. The handle can be had back from any address inside the mapping, with its
        //    properties; retaining takes a reference, released like any handle.
        CUmemGenericAllocationHandle retained = 0;
        CU_CHECK(cuMemRetainAllocationHandle(
            &retained, reinterpret_cast<void*>(found.address + found.bytes / 2)));
        CU_CHECK(cuMemGetAllocationPropertiesFromHandle(&found.retained, retained));
        CU_CHECK(cuMemRelease(retained));
        found.same_handle = retained == memory;
    }
    {
        const tutorial::During during(torn_down);
        // 8. The last mapping goes, which frees the memory; then the addresses are given back.
        CU_CHECK(cuMemUnmap(found.address, found.bytes));
        CU_CHECK(cuMemAddressFree(found.address, found.bytes));
    }
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::size_t wanted = (std::size_t{300} << 20) + 1;  // rounded up to whole granules
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(0, wanted);
    times.print();
    // The card's answer: what was created for 300 MiB and one byte, and whether kernels still
    // used the range after its handle was released.
    std::printf(
        "%zu bytes wanted: %zu MiB created (rounded up to the %zu MiB granularity); after "
        "cuMemRelease the mapping alone kept the memory: %zu of %zu values wrong\n",
        wanted, found.bytes >> 20, found.granularity >> 20, found.wrong,
        found.bytes / sizeof(std::uint32_t));
    std::printf(
        "%zu bytes wanted, %zu created (granularity %zu), mapped at 0x%llx: %zu values "
        "wrong; the handle had back from the middle of the range is %s\n",
        wanted, found.bytes, found.granularity, static_cast<unsigned long long>(found.address),
        found.wrong, found.same_handle ? "the one created" : "ANOTHER one");
    return found.wrong == 0 && found.same_handle ? 0 : 1;
}
#endif
