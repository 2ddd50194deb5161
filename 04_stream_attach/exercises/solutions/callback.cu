// Exercise ex04_callback (chapter 04_stream_attach), the course's solution: the CPU pass queued
// behind the kernel with cudaLaunchHostFunc, so that the call returns at once. The task is in
// ../callback.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

__global__ void produce(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        std::uint32_t x = static_cast<std::uint32_t>(i);
        for (int r = 0; r < 4096; ++r) x = x * 1664525u + 1013904223u;
        data[i] = x;
    }
}

namespace {

struct TotalJob {
    const std::uint32_t* data;
    std::size_t count;
    std::uint64_t* total;
};

// Runs when the stream reaches it: the kernel before it has finished.
void add_up(void* user_data) {
    const TotalJob* job = static_cast<const TotalJob*>(user_data);
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < job->count; ++i) sum += job->data[i];
    *job->total = sum;
    delete job;  // the job outlives queue_and_total(): the host function owns it
}

}  // namespace

void queue_and_total(cudaStream_t stream, std::uint32_t* data, std::size_t count,
                     std::uint64_t* total) {
    produce<<<256, 256, 0, stream>>>(data, count);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaLaunchHostFunc(stream, add_up, new TotalJob{data, count, total}));
}
