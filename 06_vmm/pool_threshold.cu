// Section pool_threshold: what the stream-ordered allocator's pool keeps. Memory freed with
// cudaFreeAsync stays in the pool until a synchronization, when a pool above its release threshold
// tries to give it back. (checks/pool_threshold.cu reads the pool after each step and times it.)
#include "common/check.hpp"

#include <cstddef>
#include <cstdint>

namespace {

struct PoolState {
    std::uint64_t reserved = 0, used = 0, reserved_high = 0, used_high = 0;
};

// Step 1. cudaMallocAsync takes from the device's current pool: its default pool, unless the
// program set another.
cudaMemPool_t default_pool(int device) {
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    return pool;
}

// Step 2. What a pool holds: memory reserved from the device, memory handed out, and the peaks of
// both.
PoolState read_pool(cudaMemPool_t pool) {
    PoolState s;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &s.reserved));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &s.used));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &s.reserved_high));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &s.used_high));
    return s;
}

// Step 3. How much freed memory the pool may keep at a synchronization instead of giving it back
// to the device: the default, 0, keeps nothing.
std::uint64_t threshold(cudaMemPool_t pool) {
    std::uint64_t bytes = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &bytes));
    return bytes;
}

void set_threshold(cudaMemPool_t pool, std::uint64_t bytes) {
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &bytes));
}

// Step 4. Allocate and free in stream order, then synchronize: the synchronization is when the
// pool compares what it holds with its threshold and tries to give the rest back.
void allocate_free_synchronize(std::size_t bytes, cudaStream_t stream) {
    void* p = nullptr;
    CUDA_CHECK(cudaMallocAsync(&p, bytes, stream));
    CUDA_CHECK(cudaFreeAsync(p, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Step 5. Give back what the pool keeps, down to `keep` bytes, without waiting for a
// synchronization or lowering the threshold.
void trim(cudaMemPool_t pool, std::size_t keep) {
    CUDA_CHECK(cudaMemPoolTrimTo(pool, keep));
}

}  // namespace
