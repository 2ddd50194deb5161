// Exercise ex06_alias (chapter 06_vmm), the course's solution: one cuMemCreate, two reservations,
// the same handle mapped into both. The task is in ../alias.cu.
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cuda.h>

#include <cstddef>

void map_twice(int device, std::size_t bytes, CUdeviceptr* first, CUdeviceptr* second) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    CUmemGenericAllocationHandle memory = 0;
    CU_CHECK(cuMemCreate(&memory, bytes, &prop, 0));

    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (CUdeviceptr* address : {first, second}) {
        CU_CHECK(cuMemAddressReserve(address, bytes, 0, 0, 0));
        CU_CHECK(cuMemMap(*address, bytes, 0, memory, 0));
        CU_CHECK(cuMemSetAccess(*address, bytes, &access, 1));
    }
    // Each mapping holds a reference to the memory; it is freed when the last one is unmapped.
    CU_CHECK(cuMemRelease(memory));
}

void unmap_twice(CUdeviceptr first, CUdeviceptr second, std::size_t bytes) {
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    for (CUdeviceptr address : {first, second}) {
        CU_CHECK(cuMemUnmap(address, bytes));
        CU_CHECK(cuMemAddressFree(address, bytes));
    }
}
