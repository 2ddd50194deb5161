// Checks of section read_mostly_gpus: runs ../read_mostly_gpus.cu's walkthrough and times every
// GPU's reads (median per GPU, by events), without and with the advice, GPU 0's write and the
// other GPUs' first reads after it; what LastPrefetchLocation named after the loop.
#include "05_prefetch_advise/read_mostly_gpus.cu"

#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/text.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;

namespace {

// Per GPU, medians by events: its reads without the advice, with it, and its first read after
// GPU 0 wrote (none for GPU 0); GPU 0's write.
struct Medians {
    std::vector<double> without_ms, with_ms, after_ms;
    double write_ms = 0;
    // The slowest GPU without and with the advice; the other GPUs' slowest read before the write
    // and their fastest after it.
    double slowest_without = 0, slowest_with = 0, slowest_before = 0, fastest_after = 0;
};

Medians time_walkthrough(std::size_t bytes, int gpus, int rounds, Found& found) {
    tutorial::StepTimes times;
    const Found f = walkthrough(bytes, gpus, rounds);
    found.wrong += f.wrong;
    found.wrong_after_write += f.wrong_after_write;
    found.last_prefetch[0] = f.last_prefetch[0];
    found.last_prefetch[1] = f.last_prefetch[1];
    Medians m;
    m.write_ms = times.median_ms(gpu0_writes);
    for (int g = 0; g < gpus; ++g) {
        m.without_ms.push_back(times.median_ms(unadvised_reads[g]));
        m.with_ms.push_back(times.median_ms(advised_reads[g]));
        m.after_ms.push_back(g == 0 ? 0.0 : times.median_ms(reads_after_write[g]));
    }
    m.slowest_without = *std::max_element(m.without_ms.begin(), m.without_ms.end());
    m.slowest_with = *std::max_element(m.with_ms.begin(), m.with_ms.end());
    m.slowest_before = *std::max_element(m.with_ms.begin() + 1, m.with_ms.end());
    m.fastest_after = *std::min_element(m.after_ms.begin() + 1, m.after_ms.end());
    return m;
}

void print_rates(const Medians& m, std::size_t bytes, int gpus, const Found& found) {
    tutorial::Table table(
        {{"GPU"},
         {"no advice, GB/s", tutorial::Align::right},
         {"ReadMostly, GB/s", tutorial::Align::right},
         {"ReadMostly, first read after GPU 0 wrote, GB/s", tutorial::Align::right}});
    for (int g = 0; g < gpus; ++g) {
        table.add_row({format("GPU %d", g), format("%.1f", tutorial::gb_per_s(bytes, m.without_ms[g])),
                       format("%.1f", tutorial::gb_per_s(bytes, m.with_ms[g])),
                       g == 0 ? format("(the writer: %.1f ms)", m.write_ms)
                              : format("%.1f", tutorial::gb_per_s(bytes, m.after_ms[g]))});
    }
    table.print();
    std::printf(
        "\nLastPrefetchLocation after the loop: %d without the advice, %d with it (the last GPU\n"
        "prefetched to). Device memory peak: %.0f GB/s. Without the advice every prefetch and\n"
        "every read moves the pages to the GPU that wants them, so each GPU's read starts by\n"
        "taking them from the one before. With it each GPU keeps a copy until someone writes;\n"
        "GPU 0's write left it the only copy, and the others fault theirs back in.\n\n",
        found.last_prefetch[0], found.last_prefetch[1], tutorial::peak_memory_gbps(0));
}

}  // namespace

tutorial::Result run_read_mostly_gpus(tutorial::Context& ctx) {
    const int gpus = std::min(tutorial::device_count(), max_gpus);  // the lesson's steps
    if (gpus < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", gpus));
    for (int g = 0; g < gpus; ++g) {
        if (const char* why = why_no_gpu_prefetch(g); *why) return ctx.skip(why);
    }
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (32 << 20) : (256 << 20));
    const int rounds = ctx.iters_or(ctx.quick() ? 3 : 5);
    std::printf(
        "%s of managed memory, written by the CPU, then prefetched to each of the %d GPUs in\n"
        "turn, as the appendix's loop does. Then %d rounds in which every GPU in turn adds up the\n"
        "whole buffer (median kernel time per GPU). Once without advice, once after\n"
        "cudaMemAdvise(data, n, cudaMemAdviseSetReadMostly, ...); then GPU 0 writes.\n\n",
        tutorial::format_bytes(bytes).c_str(), gpus, rounds);
    Found found;
    found.wrong += walkthrough(bytes < (1 << 20) ? bytes : (1 << 20), gpus, 1).wrong;  // warm-up
    const Medians m = time_walkthrough(bytes, gpus, rounds, found);
    CUDA_CHECK(cudaSetDevice(ctx.device));
    print_rates(m, bytes, gpus, found);
    // The cudaMemRangeGetAttribute entry: the last location to which all pages of the range
    // were prefetched.
    ctx.claim(tutorial::documented(
        "last_gpu_recorded", "LastPrefetchLocation names the last GPU prefetched to",
        found.last_prefetch[0] == gpus - 1 && found.last_prefetch[1] == gpus - 1,
        format("%d without the advice, %d with it (GPU %d was last)", found.last_prefetch[0],
               found.last_prefetch[1], gpus - 1),
        "it named another place than asked for",
        tutorial::Entry{"Runtime API reference: cudaMemRangeGetAttribute",
                        "cudaMemRangeAttributeLastPrefetchLocation cudaMemPrefetchAsync",
                        "will"}));
    const std::string small = tutorial::why_too_small(
        bytes, std::size_t{4} << 20, "a read of a few pages is mostly launch and fault overhead");
    ctx.claim(tutorial::at_least("every_gpu_reads_copy",
                                 "with ReadMostly even the slowest GPU reads much faster, from its "
                                 "own copy (with / without)",
                                 m.slowest_without / m.slowest_with, 2.0, "x",
                                 "the pages were not duplicated, or were read in place over "
                                 "NVLink without the advice")
                  .again([&] {
                      const Medians n = time_walkthrough(bytes, gpus, rounds, found);
                      return n.slowest_without / n.slowest_with;
                  }),
              small);
    ctx.claim(tutorial::at_least("write_drops_copies",
                                 "after a write on GPU 0 drops their copies, the other GPUs' next "
                                 "read is slower (before / after)",
                                 m.fastest_after / m.slowest_before, 2.0, "x",
                                 "the other GPUs still read a local copy")
                  .again([&] {
                      const Medians n = time_walkthrough(bytes, gpus, rounds, found);
                      return n.fastest_after / n.slowest_before;
                  }),
              small);
    CUDA_CHECK(cudaSetDevice(ctx.device));
    // The cudaMemAdvise entry: a write invalidates every copy of the page but the writer's.
    ctx.claim(tutorial::documented(
        "others_read_new_values", "after GPU 0's write every other GPU reads the new values",
        found.wrong_after_write == 0, format("%zu values wrong", found.wrong_after_write),
        "a GPU read a stale copy",
        tutorial::Entry{"Runtime API reference: cudaMemAdvise", "invalidated", "will"}));
    return ctx.verdict(found.wrong == 0,
                       format("every GPU's reads returned the data's sum, with and without the "
                              "advice, and the written values after the write (%d rounds)",
                              rounds));
}

TUTORIAL_SECTION(read_mostly_gpus, run_read_mostly_gpus);
