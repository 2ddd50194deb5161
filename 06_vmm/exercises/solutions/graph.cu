// Exercise ex06_graph (chapter 06_vmm), the course's solution: the step captured once, with
// stream-ordered allocation, and launched as a graph. The task is in ../graph.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

__global__ void fill_scratch(std::uint32_t* scratch, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        scratch[i] = static_cast<std::uint32_t>(i) ^ 7u;
    }
}

__global__ void use_scratch(const std::uint32_t* scratch, std::uint32_t* out, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        out[i] = scratch[i] * 3;
    }
}

cudaGraphExec_t make_step_graph(cudaStream_t stream, std::uint32_t* out, std::size_t count) {
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    std::uint32_t* scratch = nullptr;
    CUDA_CHECK(cudaMallocAsync(&scratch, count * sizeof *scratch, stream));
    fill_scratch<<<256, 256, 0, stream>>>(scratch, count);
    use_scratch<<<256, 256, 0, stream>>>(scratch, out, count);
    CUDA_CHECK(cudaFreeAsync(scratch, stream));
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_CHECK(cudaGraphDestroy(graph));
    return exec;
}

void run_step(cudaGraphExec_t graph, cudaStream_t stream, std::uint32_t*, std::size_t) {
    CUDA_CHECK(cudaGraphLaunch(graph, stream));
}
