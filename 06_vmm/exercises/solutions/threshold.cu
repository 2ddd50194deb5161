// Exercise ex06_threshold (chapter 06_vmm), the course's solution: the pool's release threshold
// raised before the job, so that it holds on to the block at every synchronization, and the pool
// trimmed after it, so that the memory goes back at once. The task is in ../threshold.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

__global__ void scratch_work(unsigned char* scratch, std::size_t bytes, unsigned char value) {
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x * 4096;
    for (std::size_t at = (std::size_t{blockIdx.x} * blockDim.x + threadIdx.x) * 4096; at < bytes;
         at += stride) {
        scratch[at] = value;  // one value in every 4 KiB page
    }
}

void job_step(cudaMemPool_t pool, std::size_t bytes, int step, cudaStream_t stream) {
    void* scratch = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&scratch, bytes, pool, stream));
    scratch_work<<<64, 256, 0, stream>>>(static_cast<unsigned char*>(scratch), bytes,
                                         static_cast<unsigned char>(step));
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaFreeAsync(scratch, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

void prepare_pool(cudaMemPool_t pool, std::size_t bytes) {
    // Keep everything: the pool never holds more than the job's one block here. A threshold of
    // the job's working set works too, where the pool reserves no more than that for it.
    (void)bytes;
    std::uint64_t keep = UINT64_MAX;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
}

void finish_pool(cudaMemPool_t pool) {
    CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));  // nothing is allocated now: all of it can go
}
