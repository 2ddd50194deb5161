// Checks of section read_mostly_gpus: ../read_mostly_gpus.cu's loop without and with the
// advice, then every GPU in turn reading all of it (median kernel time per GPU); a write on GPU 0
// that drops the other copies; what LastPrefetchLocation named.
#include "05_prefetch_advise/read_mostly_gpus.cu"

#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

using tutorial::format;

namespace {

constexpr std::uint32_t written_seed = 42;

struct GpuReads {
    std::vector<double> ms;    // per GPU: median kernel read of the whole buffer
    int prefetches_named = 0;  // prefetches the attribute named right afterwards
    int wrong = 0;             // sums that were not the data's
};

// The CPU writes the data; it is prefetched to every GPU in turn; then, `rounds` times, each GPU
// in turn reads all of it.
GpuReads read_on_every_gpu(std::uint32_t* data, std::size_t count, int gpus, int rounds) {
    GpuReads r;
    r.prefetches_named = write_then_prefetch_to_every_gpu(data, count, gpus);
    std::vector<std::vector<double>> ms(gpus);
    for (int round = 0; round < rounds; ++round) {
        for (int g = 0; g < gpus; ++g) {
            CUDA_CHECK(cudaSetDevice(g));
            const DeviceSum s = timed_device_sum(data, count);
            ms[g].push_back(s.ms);
            r.wrong += s.sum != pattern_sum(count, seed);
        }
    }
    for (int g = 0; g < gpus; ++g) r.ms.push_back(tutorial::median(ms[g]));
    return r;
}

struct AfterWrite {
    double write_ms = 0;
    std::vector<double> ms;  // per GPU: its first read after GPU 0's write (0 for GPU 0)
    std::size_t wrong = 0;   // values another GPU read that were not the written ones
};

// A kernel on GPU 0 writes the whole buffer; then every other GPU reads it once.
AfterWrite write_on_gpu0(std::uint32_t* data, std::size_t count, int gpus) {
    AfterWrite w;
    w.ms.assign(gpus, 0.0);
    CUDA_CHECK(cudaSetDevice(0));
    w.write_ms = timed_device_fill(data, count, written_seed);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int g = 1; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        w.ms[g] = timed_device_sum(data, count).ms;
        w.wrong += mismatches_on_device(data, count, written_seed);
    }
    return w;
}

}  // namespace

tutorial::Result run_read_mostly_gpus(tutorial::Context& ctx) {
    const int gpus = tutorial::device_count();
    if (gpus < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", gpus));
    for (int g = 0; g < gpus; ++g) {
        if (const char* why = why_no_gpu_prefetch(g); *why) return ctx.skip(why);
    }
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (32 << 20) : (256 << 20));
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const int rounds = ctx.iters_or(ctx.quick() ? 3 : 5);
    std::printf(
        "%s of managed memory, written by the CPU, then prefetched to each of the %d GPUs in\n"
        "turn, as the appendix's loop does. Then %d rounds in which every GPU in turn adds up the\n"
        "whole buffer (median kernel time per GPU). Once without advice, once after\n"
        "cudaMemAdvise(data, n, cudaMemAdviseSetReadMostly, ...).\n\n",
        tutorial::format_bytes(bytes).c_str(), gpus, rounds);
    std::uint32_t* plain = allocate(bytes, false);
    const GpuReads without = read_on_every_gpu(plain, count, gpus, rounds);
    CUDA_CHECK(cudaFree(plain));
    std::uint32_t* shared = allocate(bytes, true);
    const GpuReads with = read_on_every_gpu(shared, count, gpus, rounds);
    const AfterWrite after = write_on_gpu0(shared, count, gpus);
    const int last = last_prefetch_location(shared, bytes);
    CUDA_CHECK(cudaFree(shared));
    CUDA_CHECK(cudaSetDevice(ctx.device));

    tutorial::Table table(
        {{"GPU"},
         {"no advice, GB/s", tutorial::Align::right},
         {"ReadMostly, GB/s", tutorial::Align::right},
         {"ReadMostly, first read after GPU 0 wrote, GB/s", tutorial::Align::right}});
    double slowest_without = 1e300, slowest_with = 1e300, fastest_after = 0, slowest_before = 1e300;
    for (int g = 0; g < gpus; ++g) {
        const double a = tutorial::gb_per_s(bytes, without.ms[g]);
        const double b = tutorial::gb_per_s(bytes, with.ms[g]);
        slowest_without = std::min(slowest_without, a);
        slowest_with = std::min(slowest_with, b);
        if (g > 0) {
            fastest_after = std::max(fastest_after, tutorial::gb_per_s(bytes, after.ms[g]));
            slowest_before = std::min(slowest_before, b);
        }
        table.add_row({format("GPU %d", g), format("%.1f", a), format("%.1f", b),
                       g == 0 ? format("(the writer: %.1f ms)", after.write_ms)
                              : format("%.1f", tutorial::gb_per_s(bytes, after.ms[g]))});
    }
    table.print();
    std::printf(
        "\nLastPrefetchLocation after the loop: %d (the last GPU prefetched to). Device memory\n"
        "peak: %.0f GB/s. Without the advice every prefetch and every read moves the pages to\n"
        "the GPU that wants them, so each GPU's read starts by taking them from the one before.\n"
        "With it each GPU keeps a copy until someone writes; GPU 0's write left it the only\n"
        "copy, and the others fault theirs back in.\n\n",
        last, tutorial::peak_memory_gbps(0));
    const int named = without.prefetches_named + with.prefetches_named;  // of 2 * gpus
    ctx.claim(tutorial::documented(
        "LastPrefetchLocation names each prefetch's GPU as soon as it is done", named == 2 * gpus,
        format("%d of %d prefetches", named, 2 * gpus), "it named another place than asked for",
        "Runtime API reference: cudaMemRangeGetAttribute"));
    ctx.claim(
        tutorial::at_least("with ReadMostly every GPU reads its own copy: the slowest GPU "
                           "reads much faster than without the advice (with / without)",
                           slowest_with / slowest_without, 2.0, "x",
                           "the pages were not duplicated, or were read in place over NVLink "
                           "without the advice"));
    ctx.claim(tutorial::at_least(
        "a write on GPU 0 drops the other GPUs' copies: their next read is slower (before / after)",
        slowest_before / fastest_after, 2.0, "x", "the other GPUs still read a local copy"));
    // The cudaMemAdvise entry: a write drops every copy of the page but the writer's.
    ctx.claim(tutorial::documented("after GPU 0's write every other GPU reads the new values",
                                   after.wrong == 0, format("%zu values wrong", after.wrong),
                                   "a GPU read a stale copy",
                                   "Runtime API reference: cudaMemAdvise"));
    return ctx.verdict(without.wrong + with.wrong == 0 && after.wrong == 0,
                       format("every GPU's %d reads returned the data's sum, with and without the "
                              "advice, and the written values after the write",
                              2 * rounds));
}

TUTORIAL_SECTION(read_mostly_gpus, run_read_mostly_gpus);
