// Exercise ex05_prefetch (chapter 05_prefetch_advise): move the data before it is needed.
//
// The data starts in host memory (the CPU wrote it). increment_given() launches the kernel on it
// as it is: every page the kernel touches faults and crosses the bus on demand, a few at a time,
// and afterwards every page the CPU reads faults back. Write increment_prefetched() so that the
// pages move in bulk instead: a prefetch to the GPU before the kernel and a prefetch back to the
// host after it, all in the stream (the `fault_vs_prefetch` section measures each way).
//
// The check (exercises/check/prefetch.cu) times each function plus the CPU reading a value of
// every page afterwards, on 128 MiB, and passes when
//   - every value the CPU reads is one more than it wrote,
//   - increment_prefetched() and the CPU's read finish at least 1.5x sooner than with
//     increment_given().
// Run it: cmake --build build --target ex05_prefetch && ./build/bin/ex05_prefetch
//    or:  ctest --preset exercise -R 05_prefetch_advise
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

// Given: the kernel on data wherever it is; page faults move it.
void increment_given(std::uint32_t* data, std::size_t count, int device, cudaStream_t stream) {
    (void)device;
    increment<<<1024, 256, 0, stream>>>(data, count);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Yours: the same, with the data moved in bulk both ways.
void increment_prefetched(std::uint32_t* data, std::size_t count, int device, cudaStream_t stream) {
    // TODO 1: before the kernel, cudaMemPrefetchAsync(data, bytes, to_gpu, 0, stream), where
    //         to_gpu is a cudaMemLocation {cudaMemLocationTypeDevice, device}.
    // TODO 2: after the kernel, the same call with {cudaMemLocationTypeHost, 0}, so that the
    //         pages are in host memory before the CPU reads them. Then synchronize the stream.
    increment_given(data, count, device, stream);
}
