// Section sleep_wake: give a buffer's physical memory back to the driver while keeping its
// addresses, then put memory behind the same addresses again (what inference servers do to
// their weights between jobs). checks/sleep_wake.cu measures the memory and judges the lesson.
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

namespace {

struct Sleeper {
    CUmemAllocationProp prop;             // what kind of physical memory
    std::size_t bytes;                    // a multiple of the granularity
    CUdeviceptr address;                  // reserved once, valid through every sleep
    CUmemGenericAllocationHandle memory;  // the physical memory, while awake
};

// Step 1. Reserve the addresses and map memory behind them, as in `basics`. The handle is kept:
// releasing it is what gives the memory back in step 2.
Sleeper allocate(int device, std::size_t wanted) {
    const auto cuMemGetAllocationGranularity = DRIVER_FUNCTION(cuMemGetAllocationGranularity);
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    Sleeper s{};
    s.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    s.prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    s.prop.location.id = device;
    std::size_t granularity = 0;
    CU_CHECK(
        cuMemGetAllocationGranularity(&granularity, &s.prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    s.bytes = (wanted + granularity - 1) / granularity * granularity;
    CU_CHECK(cuMemAddressReserve(&s.address, s.bytes, granularity, 0, 0));
    CU_CHECK(cuMemCreate(&s.memory, s.bytes, &s.prop, 0));
    CU_CHECK(cuMemMap(s.address, s.bytes, 0, s.memory, 0));
    CUmemAccessDesc access{};
    access.location = s.prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(s.address, s.bytes, &access, 1));
    return s;
}

// Step 2. Sleep: save the contents to pinned host memory, unmap, release the handle. With no
// mapping and no handle left the driver frees the memory; the range stays a reservation.
void put_to_sleep(Sleeper& s, void* pinned_copy) {
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    CUDA_CHECK(cudaMemcpy(pinned_copy, reinterpret_cast<void*>(s.address), s.bytes,
                          cudaMemcpyDeviceToHost));
    CU_CHECK(cuMemUnmap(s.address, s.bytes));
    CU_CHECK(cuMemRelease(s.memory));
    s.memory = 0;
}

// Step 3. Wake: new physical memory, mapped at the very same addresses. A new mapping starts
// with no access at all, so it must be granted again before anything touches it.
void remap(Sleeper& s) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    CU_CHECK(cuMemCreate(&s.memory, s.bytes, &s.prop, 0));
    CU_CHECK(cuMemMap(s.address, s.bytes, 0, s.memory, 0));
}

void grant_and_restore(const Sleeper& s, const void* pinned_copy) {
    const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    CUmemAccessDesc access{};
    access.location = s.prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(s.address, s.bytes, &access, 1));
    CUDA_CHECK(cudaMemcpy(reinterpret_cast<void*>(s.address), pinned_copy, s.bytes,
                          cudaMemcpyHostToDevice));
}

// Step 4. Done for good: the mapping, the handle, then the addresses.
void free_for_good(Sleeper& s) {
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    CU_CHECK(cuMemUnmap(s.address, s.bytes));
    CU_CHECK(cuMemRelease(s.memory));
    CU_CHECK(cuMemAddressFree(s.address, s.bytes));
}

}  // namespace
