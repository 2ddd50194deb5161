// Section basics: the VMM steps one at a time. Physical memory and addresses are created
// separately, joined by a mapping, made usable by an access grant, and torn down in reverse.
// (checks/basics.cu runs the steps, has kernels use the range and reads the free memory.)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"

#include <cstddef>
#include <cstdint>

namespace {

struct Mapping {
    CUmemAllocationProp prop;  // what kind of physical memory
    std::size_t granularity;   // sizes and offsets come in multiples of this
    std::size_t bytes;
    CUmemGenericAllocationHandle memory;  // the physical memory
    CUdeviceptr address;                  // the addresses it is mapped at
};

// Steps 1 to 4. Physical memory, a range of addresses, the mapping, the access grant. The cu*
// names are local variables holding the driver's functions, looked up through the runtime
// (common/driver.hpp says why), with the names and types of <cuda.h>: the calls read as documented.
Mapping create_and_map(int device, std::size_t wanted) {
    const auto cuMemGetAllocationGranularity = DRIVER_FUNCTION(cuMemGetAllocationGranularity);
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    Mapping m{};
    m.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;  // device memory that is never paged out
    m.prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    m.prop.location.id = device;
    m.prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;  // not shared with other processes
    CU_CHECK(
        cuMemGetAllocationGranularity(&m.granularity, &m.prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    m.bytes = tutorial::round_up(wanted, m.granularity);
    CU_CHECK(cuMemCreate(&m.memory, m.bytes, &m.prop, 0));  // flags: 0, the only value

    // Aligned to the granularity (what cuMemMap needs), no preferred address (0), flags 0.
    CU_CHECK(cuMemAddressReserve(&m.address, m.bytes, m.granularity, 0, 0));
    CU_CHECK(cuMemMap(m.address, m.bytes, 0, m.memory, 0));  // from offset 0 of the memory

    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;  // who gets access: this device
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(m.address, m.bytes, &access, 1));  // one descriptor
    return m;
}

// Step 5. The mapping holds its own reference to the physical memory, so the handle can go at
// once; the memory is freed when the last mapping of it is removed.
void release_handle(const Mapping& m) {
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    CU_CHECK(cuMemRelease(m.memory));
}

// Step 6. To kernels the range is ordinary device memory. A kernel fills it, another counts the
// values that are not what the first wrote.
std::size_t use_range(const Mapping& m, std::uint32_t seed) {
    auto* data = reinterpret_cast<std::uint32_t*>(m.address);
    const std::size_t count = m.bytes / sizeof(std::uint32_t);
    fill_on_device(data, count, seed);
    return mismatches_on_device(data, count, seed);
}

// Step 7. The handle can be had back from any address inside a mapping, with its properties.
// Retaining takes a reference, released like any handle.
CUmemGenericAllocationHandle handle_of(CUdeviceptr address, CUmemAllocationProp* prop) {
    const auto cuMemRetainAllocationHandle = DRIVER_FUNCTION(cuMemRetainAllocationHandle);
    const auto cuMemGetAllocationPropertiesFromHandle =
        DRIVER_FUNCTION(cuMemGetAllocationPropertiesFromHandle);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    CUmemGenericAllocationHandle retained = 0;
    CU_CHECK(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(address)));
    CU_CHECK(cuMemGetAllocationPropertiesFromHandle(prop, retained));
    CU_CHECK(cuMemRelease(retained));
    return retained;
}

// Step 8. The last mapping goes, which frees the memory; then the addresses are given back.
void unmap_and_free(const Mapping& m) {
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    CU_CHECK(cuMemUnmap(m.address, m.bytes));
    CU_CHECK(cuMemAddressFree(m.address, m.bytes));
}

}  // namespace
