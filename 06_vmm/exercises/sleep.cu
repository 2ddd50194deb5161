// Exercise ex06_sleep (chapter 06_vmm): put a buffer to sleep, and wake it at the same address.
//
// Between jobs, a program holding a large buffer can give the buffer's physical memory back to
// the driver and keep only its addresses: every pointer into the buffer stays valid, and the
// memory is free for others until the buffer wakes (the `sleep_wake` section of this chapter
// does it step by step). The check maps the buffer for you, as step 1 of that section does
// (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess), and gives you its address, its
// size, the properties it was created with and the handle of its physical memory. Write the two
// steps that follow: go_to_sleep() and wake_up().
//
// The check (exercises/check/sleep.cu) fills a 64 MiB buffer with known values, calls
// go_to_sleep(), then wake_up(), and passes when
//   - go_to_sleep() saved every value in pinned_copy,
//   - while the buffer slept, free device memory (cudaMemGetInfo) rose by at least 90% of it,
//   - wake_up() returned the buffer's own address, and the device may read and write it there,
//   - and the buffer holds its values again.
// Run it: cmake --build build --target ex06_sleep && ./build/bin/ex06_sleep
//    or:  ctest --preset exercise -R 06_vmm
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>

// `bytes` is a multiple of the granularity; pinned_copy is `bytes` of pinned host memory (from
// cudaMallocHost). *memory is the handle of the buffer's physical memory while it is awake.
void go_to_sleep(CUdeviceptr address, std::size_t bytes, CUmemGenericAllocationHandle* memory,
                 void* pinned_copy) {
    // TODO 1: copy the `bytes` at `address` into pinned_copy (cudaMemcpy, cudaMemcpyDeviceToHost).
    // TODO 2: cuMemUnmap(address, bytes): the addresses stay reserved, with nothing behind them.
    // TODO 3: cuMemRelease(*memory), then *memory = 0. With no mapping and no handle left, the
    //         driver frees the physical memory.
    // Driver functions come from DRIVER_FUNCTION, as in the section:
    //   const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    (void)address;
    (void)bytes;
    (void)memory;
    (void)pinned_copy;
}

// Returns the buffer's address once it is awake: `address` itself, if it woke where it slept.
// Leave the new handle in *memory and keep it: the check unmaps the buffer and releases it.
CUdeviceptr wake_up(CUdeviceptr address, std::size_t bytes, const CUmemAllocationProp& prop,
                    CUmemGenericAllocationHandle* memory, const void* pinned_copy) {
    // TODO 4: cuMemCreate(memory, bytes, &prop, 0): new physical memory of the same kind.
    // TODO 5: cuMemMap(address, bytes, 0, *memory, 0): behind the addresses reserved all along.
    // TODO 6: cuMemSetAccess(address, bytes, &access, 1), read-write for the device that
    //         prop.location names: a new mapping starts with no access at all.
    // TODO 7: copy pinned_copy back to `address` (cudaMemcpy, cudaMemcpyHostToDevice).
    (void)bytes;
    (void)prop;
    (void)memory;
    (void)pinned_copy;
    return address;
}
