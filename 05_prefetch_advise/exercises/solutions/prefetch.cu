// Exercise ex05_prefetch (chapter 05_prefetch_advise), the course's solution: a prefetch to the
// GPU before the kernel and one back to the host after it, queued in the kernel's stream. The
// task is in ../prefetch.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

__global__ void increment(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] += 1;
    }
}

void increment_given(std::uint32_t* data, std::size_t count, int device, cudaStream_t stream) {
    (void)device;
    increment<<<1024, 256, 0, stream>>>(data, count);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

void increment_prefetched(std::uint32_t* data, std::size_t count, int device, cudaStream_t stream) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    cudaMemLocation to_gpu{};
    to_gpu.type = cudaMemLocationTypeDevice;
    to_gpu.id = device;
    cudaMemLocation to_host{};
    to_host.type = cudaMemLocationTypeHost;
    to_host.id = 0;  // ignored for the host
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, to_gpu, 0, stream));
    increment<<<1024, 256, 0, stream>>>(data, count);
    CUDA_CHECK(cudaGetLastError());
    // In stream order: starts when the kernel is done, and the CPU then reads local pages.
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, to_host, 0, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}
