// Exercise ex06_alias (chapter 06_vmm): one piece of memory at two addresses.
//
// With cuMemAlloc every address range comes with memory of its own. The virtual memory calls
// separate the two: cuMemCreate makes physical memory, cuMemAddressReserve makes addresses, and
// cuMemMap joins them, so the same memory can be mapped at two ranges (the `aliasing` section of
// this chapter shows it). Rewrite map_twice() so that *first and *second are two different
// addresses of the same `bytes` of device memory, and unmap_twice() so that it undoes it all.
//
// The check (exercises/check/alias.cu) passes when
//   - the two addresses differ,
//   - values a kernel writes through *first read back the same through *second,
//   - the device memory in use is `bytes`, not twice that (within one granularity),
//   - after unmap_twice() every byte is back.
// `bytes` is a multiple of the allocation granularity.
// Run it: cmake --build build --target ex06_alias && ./build/bin/ex06_alias
//    or:  ctest --preset exercise -R 06_vmm
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cuda.h>

#include <cstddef>

void map_twice(int device, std::size_t bytes, CUdeviceptr* first, CUdeviceptr* second) {
    // TODO 1: one cuMemCreate of `bytes` (a CUmemAllocationProp for device memory on `device`).
    // TODO 2: two cuMemAddressReserve of `bytes`; cuMemMap the same handle into each, and
    //         cuMemSetAccess each range for `device`.
    // TODO 3: cuMemRelease the handle: the two mappings keep the memory alive.
    (void)device;
    const auto cuMemAlloc = DRIVER_FUNCTION(cuMemAlloc);
    CU_CHECK(cuMemAlloc(first, bytes));
    CU_CHECK(cuMemAlloc(second, bytes));
}

void unmap_twice(CUdeviceptr first, CUdeviceptr second, std::size_t bytes) {
    // TODO 4: cuMemUnmap each range, then cuMemAddressFree each reservation.
    (void)bytes;
    const auto cuMemFree = DRIVER_FUNCTION(cuMemFree);
    CU_CHECK(cuMemFree(first));
    CU_CHECK(cuMemFree(second));
}
