// Exercise ex02_pipeline (chapter 02_pinned), the course's solution: the data cut into chunks,
// each chunk's upload, kernel and download queued on its own stream, so that the two copy engines
// and the SMs work on different chunks at the same time. The task is in ../pipeline.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

__global__ void scramble(const std::uint32_t* in, std::uint32_t* out, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        std::uint32_t x = in[i];
        for (int r = 0; r < 256; ++r) {
            x = x * 1664525u + 1013904223u;
            x ^= x >> 13;  // keeps the compiler from folding the rounds into one step
        }
        out[i] = x;
    }
}

void process_serial(const std::uint32_t* host_in, std::uint32_t* host_out, std::uint32_t* device_in,
                    std::uint32_t* device_out, std::size_t count) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    CUDA_CHECK(cudaMemcpy(device_in, host_in, bytes, cudaMemcpyHostToDevice));
    scramble<<<1024, 256>>>(device_in, device_out, count);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(host_out, device_out, bytes, cudaMemcpyDeviceToHost));
}

void process_pipelined(const std::uint32_t* host_in, std::uint32_t* host_out,
                       std::uint32_t* device_in, std::uint32_t* device_out, std::size_t count) {
    // More chunks than streams: each stream carries several chunks in order, and with 4 streams
    // there is always a chunk going up, one computing and one coming down.
    constexpr int streams_count = 4;
    constexpr std::size_t chunks = 16;
    cudaStream_t streams[streams_count];
    for (cudaStream_t& stream : streams) CUDA_CHECK(cudaStreamCreate(&stream));

    const std::size_t chunk = (count + chunks - 1) / chunks;
    for (std::size_t k = 0; k < chunks; ++k) {
        const std::size_t first = k * chunk;
        if (first >= count) break;
        const std::size_t n = std::min(chunk, count - first);
        const std::size_t bytes = n * sizeof(std::uint32_t);
        cudaStream_t stream = streams[k % streams_count];
        CUDA_CHECK(cudaMemcpyAsync(device_in + first, host_in + first, bytes,
                                   cudaMemcpyHostToDevice, stream));
        scramble<<<256, 256, 0, stream>>>(device_in + first, device_out + first, n);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpyAsync(host_out + first, device_out + first, bytes,
                                   cudaMemcpyDeviceToHost, stream));
    }
    for (cudaStream_t stream : streams) {
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaStreamDestroy(stream));
    }
}
