// The course's check of exercise ex05_read_mostly (the task is in ../read_mostly.cu): the
// learner's lookup_rounds() must return the right sums and beat the given version, each on a
// table of its own (advice stays with the memory it was given to).
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

// Written by the learner (exercises/read_mostly.cu).
std::uint64_t lookup_rounds_given(const std::uint32_t* table, std::size_t count, int rounds,
                                  int device);
std::uint64_t lookup_rounds(const std::uint32_t* table, std::size_t count, int rounds, int device);

namespace {

using tutorial::Context;
using tutorial::Result;

constexpr std::size_t count = std::size_t{16} << 20;  // 64 MiB
constexpr int rounds = 8;

using Rounds = std::uint64_t (*)(const std::uint32_t*, std::size_t, int, int);

// Three calls on the same table: the median, and whether every call's sum was right.
double time_rounds(Context& ctx, Rounds lookup, const std::uint32_t* table, std::uint64_t expected,
                   int& wrong) {
    std::vector<double> times;
    for (int call = 0; call < 3; ++call) {
        tutorial::HostTimer timer;
        const std::uint64_t total = lookup(table, count, rounds, ctx.device);
        times.push_back(timer.elapsed_ms());
        wrong += total == expected ? 0 : 1;
    }
    return tutorial::median(times);
}

Result check(Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 0) {
        return ctx.skip("concurrentManagedAccess = 0: memory advice has no effect on this GPU");
    }
    std::uint32_t* tables[2] = {nullptr, nullptr};
    std::uint64_t one_round = 0;
    for (std::size_t i = 0; i < count; ++i) one_round += static_cast<std::uint32_t>(i * 7);
    for (std::size_t i = 0; i < count; i += 256) one_round += static_cast<std::uint32_t>(i * 7);
    for (std::uint32_t*& table : tables) {
        CUDA_CHECK(cudaMallocManaged(&table, count * sizeof(std::uint32_t), cudaMemAttachGlobal));
        for (std::size_t i = 0; i < count; ++i) table[i] = static_cast<std::uint32_t>(i * 7);
    }
    int given_wrong = 0, wrong = 0;
    const auto measure = [&] {
        const double given =
            time_rounds(ctx, lookup_rounds_given, tables[0], rounds * one_round, given_wrong);
        const double yours = time_rounds(ctx, lookup_rounds, tables[1], rounds * one_round, wrong);
        return std::pair<double, double>{given, yours};
    };
    const auto [given, yours] = measure();
    std::printf("%d rounds on 64 MiB: lookup_rounds_given %.3f ms, lookup_rounds %.3f ms\n", rounds,
                given, yours);
    // Advice is a hint about how the data is used: it changes where pages go, never the values
    // (the cudaMemAdvise entry, cudaMemAdviseSetReadMostly: a processor's reads "will create a
    // read-only copy" of the pages it reads, and a write invalidates all copies but the writer's).
    ctx.claim(tutorial::documented(
        "sums_right", "lookup_rounds returns the sum of every read",
        wrong == 0 && given_wrong == 0,
        tutorial::format("%d sums wrong", wrong + given_wrong),
        "the rounds were changed, not only advised. First step: keep the rounds as given and "
        "add the advice before them",
        tutorial::Entry{"Runtime API reference: cudaMemAdvise", "read-only accessed", "will"}));
    ctx.claim(tutorial::at_least("advice_faster",
                                 "with the right advice the rounds run much faster (given / "
                                 "yours)",
                                 given / yours, 3.0, "x",
                                 "the table still migrates twice a round. First step: "
                                 "cudaMemAdvise the table with cudaMemAdviseSetReadMostly before "
                                 "the rounds")
                  .again([&] {
                      const auto [g, y] = measure();
                      return g / y;
                  }));
    for (std::uint32_t* table : tables) CUDA_CHECK(cudaFree(table));
    return ctx.verdict(wrong == 0 && given_wrong == 0,
                       tutorial::format("sums right, %.1fx faster than no advice", given / yours));
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex05_read_mostly",
        "Exercise (chapter 05_prefetch_advise): advice for read-only data",
        {{"check", "lookup_rounds: right sums, sooner than with no advice", {}, true, check}},
        {},
        "05_prefetch_advise/exercises/read_mostly.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
