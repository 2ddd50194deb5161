// Section pools: a pool of one's own, with its own properties (where its memory lives, how large
// it may grow) and attributes, apart from the default pool. (checks/pools.cu reads its attributes,
// shows what it keeps from the default pool, times it, and tries maxSize in a child.)
#include "common/check.hpp"

#include <cstddef>
#include <cstdint>

namespace {

// Step 1. A pool of our own: device memory on `device`, not shareable with other processes.
cudaMemPoolProps pool_properties(int device, std::size_t max_size) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;  // the only type for device pools
    props.handleTypes = cudaMemHandleTypeNone;      // not shareable with other processes
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    props.maxSize = max_size;  // 0: as large as the device allows
    return props;
}

cudaMemPool_t create_pool(int device) {
    const cudaMemPoolProps props = pool_properties(device, 0);
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    return pool;
}

// Step 2. Unlike the default pool (threshold 0), ours keeps all the memory it is given back.
void keep_everything(cudaMemPool_t pool) {
    std::uint64_t keep_all = UINT64_MAX;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
}

// Step 3. Allocate from it by name, on a stream; the block is freed like any other, with
// cudaFreeAsync, and goes back to the pool it came from.
void* allocate_from(cudaMemPool_t pool, std::size_t bytes, cudaStream_t stream) {
    void* p = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes, pool, stream));
    return p;
}

// Step 4. Or make it the device's current pool: then every cudaMallocAsync of the process on that
// device takes from it. The setting is process-wide, so set the old pool back afterwards.
void make_current(int device, cudaMemPool_t pool) {
    CUDA_CHECK(cudaDeviceSetMemPool(device, pool));
}

cudaMemPool_t current_pool(int device) {
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaDeviceGetMemPool(&pool, device));
    return pool;
}

// Step 5. Destroying the pool gives its memory back to the device.
void destroy_pool(cudaMemPool_t pool) {
    CUDA_CHECK(cudaMemPoolDestroy(pool));
}

}  // namespace
