// Exercise ex06_graph (chapter 06_vmm): a step that allocates, captured once as a graph.
//
// The program repeats one step: allocate scratch memory, fill it, use it into `out`, free it.
// run_step() below does it with cudaMalloc and cudaFree, which cost far more than the kernels
// (the `graph_memory` section measures it) and cannot be captured into a graph. Rewrite
// make_step_graph() so that it captures one step from `stream`, with cudaMallocAsync and
// cudaFreeAsync in place of cudaMalloc and cudaFree, and returns the instantiated graph; then
// rewrite run_step() so that it launches that graph in `stream` and nothing else.
//
// The check (exercises/check/graph.cu) passes when
//   - make_step_graph() returns an executable graph,
//   - after run_step() the stream's work has `out` right (every value (i ^ 7) * 3),
//   - and the scratch memory came from the graph allocator (cudaDeviceGetGraphMemAttribute).
// Run it: cmake --build build --target ex06_graph && ./build/bin/ex06_graph
//    or:  ctest --preset exercise -R 06_vmm
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
    // TODO 1: cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal).
    // TODO 2: the step of run_step on `stream`, with cudaMallocAsync / cudaFreeAsync.
    // TODO 3: cudaStreamEndCapture, cudaGraphInstantiate, cudaGraphDestroy the graph (the
    //         executable graph keeps what it needs); return the executable graph.
    (void)stream;
    (void)out;
    (void)count;
    return nullptr;
}

void run_step(cudaGraphExec_t graph, cudaStream_t stream, std::uint32_t* out, std::size_t count) {
    // TODO 4: launch `graph` in `stream` instead of all of this.
    (void)graph;
    std::uint32_t* scratch = nullptr;
    CUDA_CHECK(cudaMalloc(&scratch, count * sizeof *scratch));
    fill_scratch<<<256, 256, 0, stream>>>(scratch, count);
    use_scratch<<<256, 256, 0, stream>>>(scratch, out, count);
    CUDA_CHECK(cudaFree(scratch));
}
