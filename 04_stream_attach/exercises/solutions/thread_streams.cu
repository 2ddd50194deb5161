// Exercise ex04_thread_streams (chapter 04_stream_attach), the course's solution: a non-blocking
// stream per thread, the thread's buffer attached to it, and waits for that stream only. The task
// is in ../thread_streams.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

__global__ void step(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = threadIdx.x; i < count; i += blockDim.x) {
        std::uint32_t x = data[i];
        for (int r = 0; r < 64; ++r) x = x * 1664525u + 1013904223u;
        data[i] = x;
    }
}

std::uint64_t run_tasks_given(std::uint32_t* data, std::size_t count, int tasks) {
    std::uint64_t seen = 0;
    for (int t = 0; t < tasks; ++t) {
        step<<<1, 256>>>(data, count);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        seen += data[0];
    }
    return seen;
}

std::uint64_t run_tasks(std::uint32_t* data, std::size_t count, int tasks) {
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    // Length 0: the whole allocation. From here on only this stream's work may touch `data`
    // on the GPU, and the CPU may use it whenever this stream is idle.
    CUDA_CHECK(cudaStreamAttachMemAsync(stream, data, 0, cudaMemAttachSingle));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::uint64_t seen = 0;
    for (int t = 0; t < tasks; ++t) {
        step<<<1, 256, 0, stream>>>(data, count);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamSynchronize(stream));
        seen += data[0];
    }
    // Hand the buffer back to every stream before this one goes away.
    CUDA_CHECK(cudaStreamAttachMemAsync(stream, data, 0, cudaMemAttachGlobal));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return seen;
}
