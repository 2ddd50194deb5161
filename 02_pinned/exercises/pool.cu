// Exercise ex02_pool (chapter 02_pinned): pinned host memory from a pool.
//
// allocate_pinned() below calls cudaMallocHost, which pins the pages anew at every call, and
// free_pinned() calls cudaFreeHost, which unpins them again. A pool of pinned host memory
// (CUDA 12.6 and later) keeps freed memory pinned and hands it out again, in stream order, as
// cudaMallocAsync does for device memory (the `pinned_pool` section of this chapter measures the
// difference). Rewrite the four functions so that the memory comes from such a pool.
//
// The check (exercises/check/pool.cu) creates your pool, gives the device access, allocates
// 64 MiB from it and frees it again, and passes when
//   - create_pinned_pool() returns a pool,
//   - after give_device_access(), cudaMemPoolGetAccess says the device may read and write it
//     (the check launches no kernel before: one would fault on memory it may not access),
//   - allocate_pinned() returns pinned host memory (cudaPointerGetAttributes) from the pool,
//   - a kernel writes it and the CPU reads the kernel's values,
//   - and after free_pinned() and a synchronize the pool still holds the 64 MiB, ready for the
//     next allocation (cudaMemPoolAttrReservedMemCurrent).
// Where the device has no pools of host memory (hostMemoryPoolsSupported = 0), the check says
// SKIP.
// Run it: cmake --build build --target ex02_pool && ./build/bin/ex02_pool
//    or:  ctest --preset exercise -R 02_pinned
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

cudaMemPool_t create_pinned_pool() {
    // TODO 1: cudaMemPoolCreate(&pool, &props) with cudaMemPoolProps props{} where
    //         props.location.type = cudaMemLocationTypeHost, props.allocType =
    //         cudaMemAllocationTypePinned and props.handleTypes = cudaMemHandleTypeNone.
    // TODO 2: keep freed memory in the pool: cudaMemPoolSetAttribute(pool,
    //         cudaMemPoolAttrReleaseThreshold, &keep) with std::uint64_t keep = UINT64_MAX
    //         (the default, 0, gives it back at the next synchronize). Return the pool.
    return nullptr;
}

void give_device_access(cudaMemPool_t pool, int device) {
    // TODO 3: cudaMemPoolSetAccess(pool, &access, 1) with a cudaMemAccessDesc whose location is
    //         {cudaMemLocationTypeDevice, device} and flags cudaMemAccessFlagsProtReadWrite.
    (void)pool;
    (void)device;
}

// The memory may be used by work in `stream` after the call, and by the CPU once the stream has
// reached it.
void* allocate_pinned(cudaMemPool_t pool, std::size_t bytes, cudaStream_t stream) {
    // TODO 4: cudaMallocFromPoolAsync(&memory, bytes, pool, stream) instead of cudaMallocHost.
    (void)pool;
    (void)stream;
    void* memory = nullptr;
    CUDA_CHECK(cudaMallocHost(&memory, bytes));
    return memory;
}

void free_pinned(void* memory, cudaStream_t stream) {
    // TODO 5: cudaFreeAsync(memory, stream) instead of cudaFreeHost: the memory goes back to the
    //         pool, still pinned.
    (void)stream;
    CUDA_CHECK(cudaFreeHost(memory));
}
