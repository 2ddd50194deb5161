// Exercise ex06_threshold (chapter 06_vmm): keep the pool's memory through the job, and give it
// back when the job is done.
//
// A job runs many steps. Each step (job_step(), given) allocates a scratch block from a pool,
// runs a kernel on it, frees it and synchronizes. The pool is a new one, and a new pool's release
// threshold is 0: at every synchronization it tries to give back all it holds, so every step
// takes its block from the system again, and the job stalls (the `pool_cost` section measures
// it). Write prepare_pool(), which runs once before the job's first step, so that the pool keeps
// the block from one step to the next; and finish_pool(), which runs once after the last step, so
// that the memory goes back to the system when the job is done, without waiting for anything.
//
// The check (exercises/check/threshold.cu) runs the job (40 steps on 64 MiB blocks, less where
// the GPU has little free memory) on the pool with threshold 0, and again between your
// prepare_pool() and finish_pool(), round after round, and passes when
//   - your job runs at least 2x faster than the job with threshold 0,
//   - and after your job's last step the pool still holds the block (before finish_pool()).
// It also reports what the pool holds after finish_pool(): less than one block where your trim
// gave the memory back. CUDA promises only that the trim tries, so that line is not judged.
// Run it: cmake --build build --target ex06_threshold && ./build/bin/ex06_threshold
//    or:  ctest --preset exercise -R 06_vmm
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

// Given: one step of the job.
void job_step(cudaMemPool_t pool, std::size_t bytes, int step, cudaStream_t stream) {
    void* scratch = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&scratch, bytes, pool, stream));
    scratch_work<<<64, 256, 0, stream>>>(static_cast<unsigned char*>(scratch), bytes,
                                         static_cast<unsigned char>(step));
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaFreeAsync(scratch, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Yours: before the job's first step. `bytes` is the size of each step's block.
void prepare_pool(cudaMemPool_t pool, std::size_t bytes) {
    // TODO 1: let the pool hold on to the job's block at each synchronization: set its
    //         cudaMemPoolAttrReleaseThreshold (a std::uint64_t, passed by address) with
    //         cudaMemPoolSetAttribute, to at least the memory the job uses, or UINT64_MAX.
    (void)pool;
    (void)bytes;
}

// Yours: after the job's last step.
void finish_pool(cudaMemPool_t pool) {
    // TODO 2: the job is done: give the memory the pool kept back to the system now
    //         (cudaMemPoolTrimTo, keeping 0 bytes).
    (void)pool;
}
