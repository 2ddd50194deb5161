// Exercise ex04_callback (chapter 04_stream_attach): CPU work queued in a stream.
//
// queue_and_total() must arrange two things: a kernel that fills `data`, and, after it, a CPU
// pass that adds the values up into *total. The given version waits for the kernel
// (cudaStreamSynchronize) and adds them up itself, so the caller is stuck until everything is
// done. Queue the CPU pass in the stream instead, with cudaLaunchHostFunc: the call then returns
// at once, and the stream runs the host function right after the kernel (the `host_callback`
// section shows the same). A host function must not call CUDA itself; reading managed memory is
// fine, because the stream's earlier work is complete when it runs.
//
// The check (exercises/check/callback.cu) passes when
//   - after cudaStreamSynchronize(stream), *total is the sum of what the kernel wrote,
//   - queue_and_total() returned in under a quarter of the time the work took.
// Run it: cmake --build build --target ex04_callback && ./build/bin/ex04_callback
//    or:  ctest --preset exercise -R 04_stream_attach
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// Some arithmetic per value (a few milliseconds in all), then the value written.
__global__ void produce(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        std::uint32_t x = static_cast<std::uint32_t>(i);
        for (int r = 0; r < 4096; ++r) x = x * 1664525u + 1013904223u;
        data[i] = x;
    }
}

// TODO 2: a host function for cudaLaunchHostFunc has the type void(void* user_data). Put what it
//         needs (data, count, total) in a struct, pass a pointer to it, add the values up inside.

void queue_and_total(cudaStream_t stream, std::uint32_t* data, std::size_t count,
                     std::uint64_t* total) {
    produce<<<256, 256, 0, stream>>>(data, count);
    CUDA_CHECK(cudaGetLastError());
    // TODO 1: replace the wait and the loop with cudaLaunchHostFunc(stream, your_function, job).
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < count; ++i) sum += data[i];
    *total = sum;
}
