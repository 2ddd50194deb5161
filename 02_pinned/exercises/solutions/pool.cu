// Exercise ex02_pool (chapter 02_pinned), the course's solution: a pool of pinned host memory
// that keeps what is freed, opened to the device, and allocations from it in stream order. The
// task is in ../pool.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

cudaMemPool_t create_pinned_pool() {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    // cudaMemPoolCreate refuses any handle type for a cudaMemLocationTypeHost pool: this one
    // stays in its process (a cudaMemLocationTypeHostNuma pool may have one).
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeHost;
    props.location.id = 0;  // ignored for cudaMemLocationTypeHost
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    // Freed memory stays in the pool, pinned, for the next allocation.
    std::uint64_t keep_all = UINT64_MAX;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
    return pool;
}

void give_device_access(cudaMemPool_t pool, int device) {
    cudaMemAccessDesc access{};
    access.location.type = cudaMemLocationTypeDevice;
    access.location.id = device;
    access.flags = cudaMemAccessFlagsProtReadWrite;
    CUDA_CHECK(cudaMemPoolSetAccess(pool, &access, 1));
}

void* allocate_pinned(cudaMemPool_t pool, std::size_t bytes, cudaStream_t stream) {
    void* memory = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&memory, bytes, pool, stream));
    return memory;
}

void free_pinned(void* memory, cudaStream_t stream) {
    CUDA_CHECK(cudaFreeAsync(memory, stream));
}
