// Checks of section read_mostly: runs ../read_mostly.cu's walkthrough and times its steps (the
// reads, without and with the advice, and the CPU's two writes), then runs it once more with the
// driver's Unified Memory counters on, counting what each step moved.
#include "05_prefetch_advise/read_mostly.cu"

#include "../helpers/counted.hpp"
#include "../helpers/managed.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/text.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <string>

using tutorial::format;

namespace {

// The lesson's turns, by its steps: [0] without the advice, [1] with it.
constexpr const tutorial::Step& plain_kernel = kernel_reads[0];
constexpr const tutorial::Step& plain_cpu = cpu_reads[0];
constexpr const tutorial::Step& copy_kernel = kernel_reads[1];
constexpr const tutorial::Step& copy_cpu = cpu_reads[1];

// Medians of the walkthrough's reads (kernels by their events, the CPU by the host's clock) and
// its two writes.
struct Medians {
    double plain_kernel_ms, plain_cpu_ms, copy_kernel_ms, copy_cpu_ms;
    double write_ms, rewrite_ms;
};

Medians time_walkthrough(std::size_t bytes, int device, int rounds, Found& found) {
    tutorial::StepTimes times;
    const Found f = walkthrough(bytes, device, rounds);
    found.wrong += f.wrong;
    found.without = f.without;
    found.with = f.with;
    found.after_write = f.after_write;
    return {times.median_ms(plain_kernel),        times.median_host_ms(plain_cpu),
            times.median_ms(copy_kernel),         times.median_host_ms(copy_cpu),
            times.median_host_ms(first_write),    times.median_host_ms(rewrite)};
}

void print_times(std::size_t bytes, const Medians& m, const Found& found) {
    const auto right = tutorial::Align::right;
    tutorial::Table table({{"advice"},
                           {"kernel read ms", right},
                           {"CPU read ms", right},
                           {"kernel GB/s", right},
                           {"ReadMostly attribute", right}});
    table.add_row({"none", format("%.3f", m.plain_kernel_ms), format("%.3f", m.plain_cpu_ms),
                   format("%.1f", tutorial::gb_per_s(bytes, m.plain_kernel_ms)),
                   format("%d", found.without)});
    table.add_row({"cudaMemAdviseSetReadMostly", format("%.3f", m.copy_kernel_ms),
                   format("%.3f", m.copy_cpu_ms),
                   format("%.1f", tutorial::gb_per_s(bytes, m.copy_kernel_ms)),
                   format("%d", found.with)});
    table.print();
    std::printf(
        "\nThen the CPU writes the whole buffer: %.1f ms, and the same write again %.1f ms. The\n"
        "difference is what dropping the GPU's read-only copies cost the first write. The\n"
        "ReadMostly attribute is still %d after it: the advice stays, only the copies went.\n"
        "Without the advice every kernel has to fault the pages over from the CPU and every\n"
        "CPU read faults them back: each side takes the data away from the other.\n\n",
        m.write_ms, m.rewrite_ms, found.after_write);
}

// The counted claims: copies made and dropped, where the counters can be read.
void claim_counted(tutorial::Context& ctx, const tutorial::UmCounters& counters,
                   const tutorial::StepTraffic& traffic, std::size_t bytes,
                   const std::string& coherent) {
    const tutorial::UmTraffic& plain_read = traffic.of(plain_cpu);
    const tutorial::UmTraffic& copy_read = traffic.of(copy_cpu);
    const tutorial::UmTraffic& write = traffic.of(first_write);
    const tutorial::UmTraffic& after = traffic.of(read_after);
    std::printf(
        "\nWithout the advice the CPU's read takes back the pages the GPU took. With it, the GPU\n"
        "gets a copy and the CPU keeps its own: its read moves nothing. A write moves nothing\n"
        "either, but drops the GPU's copy, so the next kernel read copies the pages over "
        "again.\n\n");
    ctx.claim(tutorial::counted_at_least(
                  "cpu_read_takes_back",
                  "without the advice, the CPU's read takes the pages back from the GPU (MiB "
                  "device to host, % of the buffer)",
                  percent_of(plain_read.dtoh.total, bytes), 90.0, "%",
                  "the CPU read the pages where they were"),
              why_not_counted(counters, {&plain_read}, coherent));
    ctx.claim(tutorial::counted_at_most(
                  "cpu_keeps_copy",
                  "with ReadMostly, once the GPU has its copy, the CPU's read moves nothing (MiB "
                  "device to host)",
                  mib_of(copy_read.dtoh.total), 2.0, " MiB",
                  "the prefetch moved the pages instead of copying them: was the advice given "
                  "to this range?"),
              why_not_counted(counters, {&copy_read}, coherent));
    ctx.claim(tutorial::counted_at_most(
                  "write_moves_nothing",
                  "a CPU write to read-mostly pages moves nothing: it drops the GPU's copy (MiB "
                  "either way)",
                  mib_of(write.htod.total + write.dtoh.total), 2.0, " MiB",
                  "the CPU had no copy of its own left, and the write fetched the pages"),
              why_not_counted(counters, {&write}, coherent));
    ctx.claim(tutorial::counted_at_least(
                  "read_after_write_copies",
                  "...so the next kernel read copies the pages over again (MiB host to device, % "
                  "of the buffer)",
                  percent_of(after.htod.total, bytes), 90.0, "%",
                  "the GPU's copy survived the write: the kernel read stale data?"),
              why_not_counted(counters, {&after}, coherent));
}

}  // namespace

tutorial::Result run_read_mostly(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (8 << 20) : (64 << 20));
    const int rounds = ctx.iters_or(ctx.quick() ? 3 : 10);
    std::printf(
        "%s of managed memory, twice: without advice, then with cudaMemAdviseSetReadMostly. The\n"
        "CPU writes it, it is prefetched to the GPU, then %d times the CPU reads all of it and a\n"
        "kernel reads all of it; medians of the reads:\n\n",
        tutorial::format_bytes(bytes).c_str(), rounds);
    Found found;
    found.wrong += walkthrough(bytes < (1 << 20) ? bytes : (1 << 20), ctx.device, 1).wrong;
    const Medians m = time_walkthrough(bytes, ctx.device, rounds, found);
    print_times(bytes, m, found);
    const std::string coherent = tutorial::why_hardware_coherent(ctx.device);  // pages may stay
    const std::string small = tutorial::why_too_small(
        bytes, std::size_t{4} << 20, "a read of a few pages is mostly launch and fault overhead");
    const std::string not_judged = coherent.empty() ? small : coherent;
    // The cudaMemRangeGetAttribute entry: 1 if all pages in the range have read-duplication
    // enabled, 0 otherwise.
    ctx.claim(tutorial::documented(
        "attribute_where_advised",
        "cudaMemRangeGetAttribute reports ReadMostly exactly where the advice was given",
        found.with == 1 && found.without == 0,
        format("%d with the advice, %d without", found.with, found.without),
        "the advice was not recorded for the range",
        tutorial::Entry{"Runtime API reference: cudaMemRangeGetAttribute",
                        "read-duplication", "will"}));
    ctx.claim(tutorial::at_least("kernel_reads_faster",
                                 "with the advice, the kernel's repeated reads are much faster "
                                 "(kernel time without / with)",
                                 m.plain_kernel_ms / m.copy_kernel_ms, 3.0, "x",
                                 "the pages did not migrate back and forth without the advice: "
                                 "a system where the CPU reads GPU memory in place")
                  .again([&] {
                      const Medians n = time_walkthrough(bytes, ctx.device, rounds, found);
                      return n.plain_kernel_ms / n.copy_kernel_ms;
                  }),
              not_judged);
    ctx.claim(tutorial::at_least("write_pays_to_drop",
                                 "a CPU write to read-mostly pages pays to drop the GPU's copies "
                                 "(first write / the same write again)",
                                 m.write_ms / m.rewrite_ms, 2.0, "x",
                                 "the write did not have to invalidate anything: the copies "
                                 "were already gone, or never made")
                  .again([&] {
                      const Medians n = time_walkthrough(bytes, ctx.device, rounds, found);
                      return n.write_ms / n.rewrite_ms;
                  }),
              not_judged);

    // What moved, counted by the driver once the timings are done, so that counting cannot slow
    // them; at most 64 MiB, where no record is lost (counted.hpp).
    const std::size_t counted = counted_bytes(bytes);
    {
        tutorial::UmCounters counters;
        tutorial::StepTraffic traffic(counters);
        found.wrong += walkthrough(counted, ctx.device, 1).wrong;
        print_traffic(counters, traffic, tutorial::format_bytes(counted));
        claim_counted(ctx, counters, traffic, counted, coherent);
    }
    return ctx.verdict(found.wrong == 0,
                       "every kernel and CPU read returned the data last written, with and "
                       "without the advice, in the timed and the counted runs");
}

TUTORIAL_SECTION(read_mostly, run_read_mostly);
