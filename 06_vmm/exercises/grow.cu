// Exercise ex06_grow (chapter 06_vmm): a device buffer that grows where it is.
//
// growable_resize() below grows the buffer the way cudaMalloc forces: allocate the new size,
// copy everything over, free the old. The data moves, every pointer into it goes stale, and for a
// moment both copies exist. With the driver's virtual memory management the buffer can instead
// keep its address: reserve addresses for the largest size once, and when it grows, create only
// the new physical memory and map it right behind what is already mapped (the `growable` section
// of this chapter does this and times both). Rewrite the three functions that way.
//
// The check (exercises/check/grow.cu) grows a buffer from 64 MiB to 160 and 320 MiB (at most
// 1 GiB) and passes when, after each growth,
//   - the buffer is at the address it had at first,
//   - the values written before the growth are still there,
//   - the device memory in use grew by the buffer's size (within one granularity), no more,
// and growable_destroy() gives every byte back.
// Run it: cmake --build build --target ex06_grow && ./build/bin/ex06_grow
//    or:  ctest --preset exercise -R 06_vmm
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cuda.h>

#include <cstddef>

// The buffer's state. Add what your version needs (the reservation, the granularity, what is
// mapped where); the check only ever sees a pointer to it.
struct Growable {
    int device = 0;
    std::size_t max_size = 0;
    CUdeviceptr base = 0;  // where the data starts
    std::size_t size = 0;  // bytes of data
};

Growable* growable_create(int device, std::size_t max_size) {
    // TODO 1: reserve max_size of addresses (rounded up to the granularity that
    //         cuMemGetAllocationGranularity gives) with cuMemAddressReserve; base is its start.
    Growable* buffer = new Growable;
    buffer->device = device;
    buffer->max_size = max_size;
    return buffer;
}

// Grows the buffer to new_size bytes (never shrinks it) and returns where the data is.
CUdeviceptr growable_resize(Growable* buffer, std::size_t new_size) {
    // TODO 2: instead of allocating and copying: cuMemCreate the missing bytes (rounded up to
    //         the granularity), cuMemMap them at base + what is mapped already, cuMemSetAccess
    //         for the new range; cuMemRelease the handle (the mapping keeps the memory).
    const auto cuMemAlloc = DRIVER_FUNCTION(cuMemAlloc);
    const auto cuMemcpyDtoD = DRIVER_FUNCTION(cuMemcpyDtoD);
    const auto cuMemFree = DRIVER_FUNCTION(cuMemFree);
    if (new_size <= buffer->size) return buffer->base;
    CUdeviceptr bigger = 0;
    CU_CHECK(cuMemAlloc(&bigger, new_size));
    if (buffer->size > 0) {
        CU_CHECK(cuMemcpyDtoD(bigger, buffer->base, buffer->size));
        CU_CHECK(cuMemFree(buffer->base));
    }
    buffer->base = bigger;
    buffer->size = new_size;
    return buffer->base;
}

void growable_destroy(Growable* buffer) {
    // TODO 3: cuMemUnmap what is mapped, then cuMemAddressFree the reservation.
    const auto cuMemFree = DRIVER_FUNCTION(cuMemFree);
    if (buffer->size > 0) CU_CHECK(cuMemFree(buffer->base));
    delete buffer;
}
