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

constexpr std::size_t count = std::size_t{1} << 20;

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

// The learner's call, 4 times (the first warms up): the medians of how long it took to return
// and how long until the stream was done; adds the wrong totals to `wrong`.
struct Times {
    double returned_ms, done_ms;
};

Times time_calls(cudaStream_t stream, std::uint32_t* data, std::uint64_t* total,
                 std::uint64_t expected, int& wrong, int& calls) {
    std::vector<double> returned, finished;
    for (int run = 0; run < 4; ++run) {  // run 0 warms up
        *total = 0;
        tutorial::HostTimer timer;
        queue_and_total(stream, data, count, total);
        const double back = timer.elapsed_ms();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const double done = timer.elapsed_ms();
        wrong += *total == expected ? 0 : 1;
        ++calls;
        if (run > 0) {
            returned.push_back(back);
            finished.push_back(done);
        }
    }
    const Times t{tutorial::median(returned), tutorial::median(finished)};
    std::printf("queue_and_total returned after %.3f ms; the stream was done after %.3f ms\n",
                t.returned_ms, t.done_ms);
    return t;
}

Result check(Context& ctx) {
    std::uint32_t* data = nullptr;
    std::uint64_t* total = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, count * sizeof(std::uint32_t), cudaMemAttachGlobal));
    CUDA_CHECK(cudaMallocManaged(&total, sizeof(*total), cudaMemAttachGlobal));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream));
    const std::uint64_t expected = expected_total(count);
    int wrong = 0;
    int calls = 0;
    const Times t = time_calls(stream, data, total, expected, wrong, calls);
    // A host function runs after the work queued before it and is part of the stream's work, so
    // a right queue_and_total gives the right total once the stream is synchronized.
    ctx.claim(tutorial::documented(
        "total_right", "after cudaStreamSynchronize, *total is the sum of the kernel's values",
        wrong == 0, std::to_string(wrong) + " of " + std::to_string(calls) + " totals wrong",
        "the CPU added the values up before the kernel wrote them. First step: queue the CPU "
        "pass with cudaLaunchHostFunc on the kernel's stream",
        tutorial::Entry{"Runtime API reference: cudaLaunchHostFunc", "called block", "will"}));
    ctx.claim(tutorial::at_most(
                  "returns_at_once",
                  "queue_and_total returns long before the work is done (returned / done)",
                  t.returned_ms / t.done_ms, 0.25, "",
                  "the call still waits for the kernel. First step: replace cudaStreamSynchronize "
                  "and the loop with cudaLaunchHostFunc(stream, function, job)")
                  .again([&] {
                      const Times n = time_calls(stream, data, total, expected, wrong, calls);
                      return n.returned_ms / n.done_ms;
                  }));

    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(total));
    CUDA_CHECK(cudaFree(data));
    return ctx.verdict(wrong == 0,
                       tutorial::format("%d of %d totals right, the call returned "
                                        "after %.0f%% of the work's time",
                                        calls - wrong, calls, 100.0 * t.returned_ms / t.done_ms));
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex04_callback",
        "Exercise (chapter 04_stream_attach): CPU work queued in a stream",
        {{"check", "queue_and_total: returns at once, total right", {}, true, check}},
        {},
        "04_stream_attach/exercises/callback.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
