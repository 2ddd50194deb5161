// Section pinned_pool: pinned host memory from a stream-ordered pool (CUDA 12.6 and later), the
// cudaMallocHost that does not pin pages at every call. checks/pinned_pool.cu times and judges it.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace {

// Step 1. A pool of pinned host memory, on no particular NUMA node. Host pools cannot be shared
// with other processes, so handleTypes stays None. Freed memory stays in the pool (threshold:
// keep everything) so that the next allocation of that size finds pages already pinned.
cudaMemPool_t create_host_pool() {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeHost;
    props.location.id = 0;  // ignored for cudaMemLocationTypeHost
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    std::uint64_t keep_all = UINT64_MAX;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
    return pool;
}

// Step 2. The CPU may use the pool's memory at once; a GPU only once it is given access.
void give_device_access(cudaMemPool_t pool, int device) {
    cudaMemAccessDesc access{};
    access.location.type = cudaMemLocationTypeDevice;
    access.location.id = device;
    access.flags = cudaMemAccessFlagsProtReadWrite;
    CUDA_CHECK(cudaMemPoolSetAccess(pool, &access, 1));  // one descriptor
}

// Step 3. Allocate and free in stream order, as with cudaMallocAsync: the memory may be used by
// work in `stream` after the call, and by the CPU once the stream has reached it.
void* allocate(cudaMemPool_t pool, std::size_t bytes, cudaStream_t stream) {
    void* host = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&host, bytes, pool, stream));
    return host;
}

void release(void* host, cudaStream_t stream) {
    CUDA_CHECK(cudaFreeAsync(host, stream));
}

// Step 4. CUDA 13 names a current pool per location and kind of memory, as cudaDeviceSetMemPool
// did for devices: here the pinned host memory of the whole machine.
cudaMemPool_t default_host_pool() {
    cudaMemLocation host{cudaMemLocationTypeHost, 0};
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemGetDefaultMemPool(&pool, &host, cudaMemAllocationTypePinned));
    return pool;
}

void make_current_host_pool(cudaMemPool_t pool) {
    cudaMemLocation host{cudaMemLocationTypeHost, 0};
    CUDA_CHECK(cudaMemSetMemPool(&host, cudaMemAllocationTypePinned, pool));
}

cudaMemPool_t current_host_pool() {
    cudaMemLocation host{cudaMemLocationTypeHost, 0};
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemGetMemPool(&pool, &host, cudaMemAllocationTypePinned));
    return pool;
}

}  // namespace
