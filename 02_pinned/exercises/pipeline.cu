// Exercise ex02_pipeline (chapter 02_pinned): make the copies and the kernel overlap.
//
// process_serial() uploads the whole input, runs the kernel, then downloads the whole output:
// while one copy engine works, the other copy engine and the SMs wait. Write process_pipelined()
// so that all three work at once: cut the data into chunks and give each chunk its own stream,
// so that chunk k's kernel runs while chunk k+1 goes up and chunk k-1 comes down (the `async`
// section of this chapter measures the same idea).
//
// The host buffers are pinned (cudaMallocHost), so cudaMemcpyAsync really is asynchronous. When
// process_pipelined() returns, host_out must hold every result.
//
// The check (exercises/check/pipeline.cu) runs both functions on 64 MiB and passes when
//   - every value of host_out is the kernel's result for its input, and
//   - process_pipelined() finishes at least 1.3x sooner than process_serial()
//     (a generous bar: overlapping three stages of about equal length gives close to 2x).
// Run it: cmake --build build --target ex02_pipeline && ./build/bin/ex02_pipeline
//    or:  ctest --preset exercise -R 02_pinned
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// 256 rounds of mixing per value: about as long on an H100 as copying the value up or down, so
// each of the three stages takes a third of the serial time, and overlapping them pays.
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

// Given: the three stages one after the other, on the legacy default stream.
void process_serial(const std::uint32_t* host_in, std::uint32_t* host_out, std::uint32_t* device_in,
                    std::uint32_t* device_out, std::size_t count) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    CUDA_CHECK(cudaMemcpy(device_in, host_in, bytes, cudaMemcpyHostToDevice));
    scramble<<<1024, 256>>>(device_in, device_out, count);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(host_out, device_out, bytes, cudaMemcpyDeviceToHost));
}

// Yours: the same result, sooner.
void process_pipelined(const std::uint32_t* host_in, std::uint32_t* host_out,
                       std::uint32_t* device_in, std::uint32_t* device_out, std::size_t count) {
    // TODO 1: create a few streams (cudaStreamCreate), 4 to 8 is plenty.
    // TODO 2: for each chunk, on its own stream: cudaMemcpyAsync the chunk up, launch scramble on
    //         the chunk (the 4th launch parameter is the stream), cudaMemcpyAsync it down.
    // TODO 3: wait for every stream (cudaStreamSynchronize), then cudaStreamDestroy each.
    process_serial(host_in, host_out, device_in, device_out, count);
}
