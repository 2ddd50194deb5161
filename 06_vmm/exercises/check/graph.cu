// The course's check of exercise ex06_graph (the task is in ../graph.cu): the learner's step must
// run as a graph whose scratch memory comes from the graph allocator, and give the right result.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

// Written by the learner (exercises/graph.cu).
cudaGraphExec_t make_step_graph(cudaStream_t stream, std::uint32_t* out, std::size_t count);
void run_step(cudaGraphExec_t graph, cudaStream_t stream, std::uint32_t* out, std::size_t count);

namespace {

using tutorial::Context;
using tutorial::format_bytes;
using tutorial::Result;

constexpr int steps = 20;

std::size_t wrong_values(const std::uint32_t* out, std::size_t count) {
    std::vector<std::uint32_t> host(count);
    CUDA_CHECK(cudaMemcpy(host.data(), out, count * sizeof *out, cudaMemcpyDeviceToHost));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) {
        wrong += host[i] != (static_cast<std::uint32_t>(i) ^ 7u) * 3u;
    }
    return wrong;
}

Result check(Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported) != 1) {
        return ctx.skip("memoryPoolsSupported = 0: no stream-ordered or graph allocations here");
    }
    const std::size_t count = std::size_t{4} << 20;  // 16 MiB of scratch
    const std::size_t bytes = count * sizeof(std::uint32_t);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::uint32_t* out = nullptr;
    CUDA_CHECK(cudaMalloc(&out, bytes));
    CUDA_CHECK(cudaDeviceGraphMemTrim(ctx.device));
    const std::size_t free_at_start = tutorial::free_device_memory();

    cudaGraphExec_t graph = make_step_graph(stream, out, count);
    std::size_t wrong = 0;
    for (int s = 0; s < steps; ++s) {
        CUDA_CHECK(cudaMemsetAsync(out, 0, bytes, stream));  // each step must write it anew
        run_step(graph, stream, out, count);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        wrong += wrong_values(out, count);
    }
    std::uint64_t reserved = 0;
    CUDA_CHECK(
        cudaDeviceGetGraphMemAttribute(ctx.device, cudaGraphMemAttrReservedMemCurrent, &reserved));
    if (graph != nullptr) CUDA_CHECK(cudaGraphExecDestroy(graph));
    CUDA_CHECK(cudaDeviceGraphMemTrim(ctx.device));
    const std::size_t left = tutorial::device_memory_used_since(free_at_start);
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaStreamDestroy(stream));
    std::printf("%d steps: %zu values wrong; the graph allocator held %s; %s left in use\n", steps,
                wrong, format_bytes(reserved).c_str(), format_bytes(left).c_str());

    ctx.claim(tutorial::documented(
        "graph_made", "make_step_graph returns an executable graph", graph != nullptr,
        graph != nullptr ? "it does" : "it returned nullptr",
        "nothing was captured. First step: cudaStreamBeginCapture on `stream`, the step, "
        "cudaStreamEndCapture, cudaGraphInstantiate",
        tutorial::Entry{"Runtime API reference: cudaGraphInstantiate", "pGraphExec",
                        "is returned"}));
    ctx.claim(tutorial::documented(
        "scratch_from_graph", "the step's scratch memory comes from the graph allocator",
        reserved >= bytes, format_bytes(reserved) + " reserved for graphs",
        "the scratch is allocated outside the graph. First step: cudaMallocAsync and "
        "cudaFreeAsync on the capturing stream, and run_step launching the graph",
        tutorial::Entry{"Runtime API reference: cudaMallocAsync", "capture owned graph",
                        "is owned"}));
    ctx.claim(tutorial::documented(
        "steps_right", "every step leaves `out` right", wrong == 0,
        std::to_string(wrong) + " values wrong in " + std::to_string(steps) + " steps",
        "the graph does not write `out`, or run_step does not launch it",
        tutorial::Entry{"Runtime API reference: cudaGraphAddMemAllocNode",
                        "cudaGraphAddMemFreeNode", "can"}));
    return ctx.verdict(graph != nullptr && reserved >= bytes && wrong == 0,
                       std::to_string(steps) +
                           " steps: " + (graph != nullptr ? "one graph launch each" : "no graph") +
                           ", graph allocator " + format_bytes(reserved) + ", " +
                           std::to_string(wrong) + " values wrong");
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex06_graph",
        "Exercise (chapter 06_vmm): a step that allocates, captured once as a graph",
        {{"check",
          "make_step_graph, run_step: one graph launch per step, memory nodes inside",
          {},
          true,
          check}},
        {},
        "06_vmm/exercises/graph.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
