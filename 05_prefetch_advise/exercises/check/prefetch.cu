// The course's check of exercise ex05_prefetch (the task is in ../prefetch.cu): the learner's
// increment_prefetched(), followed by the CPU reading every value, must give the right values
// and finish sooner than the given version does.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

// Written by the learner (exercises/prefetch.cu).
void increment_given(std::uint32_t* data, std::size_t count, int device, cudaStream_t stream);
void increment_prefetched(std::uint32_t* data, std::size_t count, int device, cudaStream_t stream);

namespace {

using tutorial::Context;
using tutorial::Result;

using Increment = void (*)(std::uint32_t*, std::size_t, int, cudaStream_t);

struct Run {
    double ms;
    std::size_t wrong;
};

// The CPU writes every value (so the pages start in host memory), then, timed: the function
// and the CPU reading one value of every 4 KiB page (which brings each page back). Then, untimed,
// every value is checked.
Run run_once(Context& ctx, Increment increment, std::uint32_t* data, std::size_t count,
             cudaStream_t stream) {
    for (std::size_t i = 0; i < count; ++i) data[i] = static_cast<std::uint32_t>(i);
    tutorial::HostTimer timer;
    increment(data, count, ctx.device, stream);
    volatile std::uint32_t read = 0;  // volatile: the reads must happen
    for (std::size_t i = 0; i < count; i += 1024) read = read + data[i];
    const double ms = timer.elapsed_ms();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) wrong += data[i] != static_cast<std::uint32_t>(i + 1);
    return {ms, wrong};
}

Result check(Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 0) {
        return ctx.skip("concurrentManagedAccess = 0: this GPU cannot prefetch managed memory");
    }
    constexpr std::size_t count = std::size_t{32} << 20;  // 128 MiB
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, count * sizeof(std::uint32_t), cudaMemAttachGlobal));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream));
    std::size_t wrong = 0, checked = 0;
    // Each way in turn, round after round (round 0 warms up); the medians.
    const auto measure = [&] {
        std::vector<double> given_ms, yours_ms;
        for (int round = 0; round < 4; ++round) {
            const Run given = run_once(ctx, increment_given, data, count, stream);
            const Run yours = run_once(ctx, increment_prefetched, data, count, stream);
            wrong += yours.wrong;
            checked += count;
            if (round > 0) {
                given_ms.push_back(given.ms);
                yours_ms.push_back(yours.ms);
            }
        }
        return std::pair<double, double>{tutorial::median(given_ms), tutorial::median(yours_ms)};
    };
    const auto [given, yours] = measure();
    std::printf(
        "increment + the CPU reading each page, 128 MiB: given %.3f ms, prefetched %.3f "
        "ms\n",
        given, yours);
    // Stream order: the prefetches and the kernel run in the order queued, and once the stream
    // is synchronized the CPU sees what the kernel wrote.
    // (the Programming Guide, N.3.1: a prefetch does not start before the work queued ahead of
    // it is done, and nothing queued after it starts before it is done).
    ctx.claim(tutorial::at_least("prefetch_beats_faults",
                                 "prefetching both ways beats page faults (given / prefetched)",
                                 given / yours, 1.5, "x",
                                 "the pages still move by faults. First step: cudaMemPrefetchAsync "
                                 "the whole buffer to the GPU before the kernel, and to the host "
                                 "after it")
                  .again([&] {
                      const auto [g, y] = measure();
                      return g / y;
                  }));
    ctx.claim(tutorial::documented(
        "values_right", "every value the CPU reads is one more than it wrote", wrong == 0,
        tutorial::format("%zu of %zu values wrong", wrong, checked),
        "the CPU read before the stream finished. First step: cudaStreamSynchronize(stream) "
        "after the last prefetch",
        tutorial::Entry{"Programming Guide, N.3.1 Data Prefetching", "API 流排序语义", "遵循"}));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(data));
    return ctx.verdict(
        wrong == 0, tutorial::format("values right, %.2fx faster than page faults", given / yours));
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex05_prefetch",
        "Exercise (chapter 05_prefetch_advise): prefetch instead of faulting",
        {{"check", "increment_prefetched: right values, sooner than faults", {}, true, check}},
        {},
        "05_prefetch_advise/exercises/prefetch.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
