// The course's check of exercise ex04_callback (the task is in ../callback.cu): the learner's
// queue_and_total() must return long before the work it queued is done, and the total must be
// right once the stream is.
#include "common/check.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

// Written by the learner (exercises/callback.cu).
void queue_and_total(cudaStream_t stream, std::uint32_t* data, std::size_t count,
                     std::uint64_t* total);

namespace {

using tutorial::Context;
using tutorial::Result;

// What produce writes, worked out on the CPU: 4096 steps of x -> a*x + c are one step A*x + C.
std::uint64_t expected_total(std::size_t count) {
    std::uint32_t a = 1, c = 0;
    for (int r = 0; r < 4096; ++r) {
        a *= 1664525u;
        c = c * 1664525u + 1013904223u;
    }
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < count; ++i) sum += a * static_cast<std::uint32_t>(i) + c;
    return sum;
}

Result check(Context& ctx) {
    constexpr std::size_t count = std::size_t{1} << 20;
    std::uint32_t* data = nullptr;
    std::uint64_t* total = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, count * sizeof(std::uint32_t), cudaMemAttachGlobal));
    CUDA_CHECK(cudaMallocManaged(&total, sizeof(*total), cudaMemAttachGlobal));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream));
    const std::uint64_t expected = expected_total(count);

    std::vector<double> returned, finished;
    int wrong = 0;
    for (int run = 0; run < 4; ++run) {  // run 0 warms up
        *total = 0;
        tutorial::HostTimer timer;
        queue_and_total(stream, data, count, total);
        const double back = timer.elapsed_ms();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const double done = timer.elapsed_ms();
        wrong += *total == expected ? 0 : 1;
        if (run > 0) {
            returned.push_back(back);
            finished.push_back(done);
        }
    }
    const double back = tutorial::median(returned);
    const double done = tutorial::median(finished);
    std::printf("queue_and_total returned after %.3f ms; the stream was done after %.3f ms\n", back,
                done);
    // A host function runs after the work queued before it and is part of the stream's work, so
    // a right queue_and_total gives the right total once the stream is synchronized.
    ctx.claim(tutorial::documented(
        "after cudaStreamSynchronize, *total is the sum of the kernel's values", wrong == 0,
        std::to_string(wrong) + " of 4 totals wrong",
        "the CPU added the values up before the kernel wrote them. First step: queue the CPU "
        "pass with cudaLaunchHostFunc on the kernel's stream",
        "Runtime API reference: cudaLaunchHostFunc"));
    ctx.claim(tutorial::at_most(
        "queue_and_total returns long before the work is done (returned / done)", back / done, 0.25,
        "",
        "the call still waits for the kernel. First step: replace cudaStreamSynchronize and the "
        "loop with cudaLaunchHostFunc(stream, function, job)"));

    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(total));
    CUDA_CHECK(cudaFree(data));
    return ctx.verdict(wrong == 0, tutorial::format("%d of 4 totals right, the call returned "
                                                    "after %.0f%% of the work's time",
                                                    4 - wrong, 100.0 * back / done));
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex04_callback",
        "Exercise (chapter 04_stream_attach): CPU work queued in a stream",
        {{"check", "queue_and_total: returns at once, total right", {}, true, check}}};
    return tutorial::run_chapter(program, argc, argv);
}
