// Checks of section fault_vs_prefetch: runs ../fault_vs_prefetch.cu's walkthrough round after
// round and times its steps (the ways it compares are interleaved that way), then once more with
// the driver's Unified Memory counters on, counting what each step moved.
#include "05_prefetch_advise/fault_vs_prefetch.cu"

#include "../helpers/counted.hpp"
#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

#include <string>

using tutorial::format;

namespace {

// Medians over `runs` walkthroughs: GPU steps by their events, CPU reads by the host's clock.
struct Medians {
    double faults_ms, prefetch_ms, resident_ms, copy_ms;
    double cpu_faults_ms, prefetch_home_ms, cpu_resident_ms;
};

Medians time_rounds(std::size_t bytes, int device, int runs, std::size_t& wrong) {
    tutorial::StepTimes times;
    for (int r = 0; r < runs; ++r) wrong += walkthrough(bytes, device).wrong;
    return {times.median_ms(faulting_read),          times.median_ms(prefetch_there),
            times.median_ms(resident_read),          times.median_ms(pinned_copy),
            times.median_host_ms(faulting_cpu_read), times.median_ms(prefetch_home),
            times.median_host_ms(resident_cpu_read)};
}

// Each row: the lesson's step, by its number in the walkthrough ("then": the step after it).
void print_times(std::size_t bytes, const Medians& m) {
    const auto row = [&](tutorial::Table& table, const char* number, const tutorial::Step& step,
                         double ms) {
        table.add_row({format("%s %s", number, step.name), format("%.2f", ms),
                       format("%.1f", tutorial::gb_per_s(bytes, ms))});
    };
    tutorial::Table there(
        {{"to the GPU"}, {"ms", tutorial::Align::right}, {"GB/s", tutorial::Align::right}});
    there.named("to_gpu");
    row(there, "2.", faulting_read, m.faults_ms);
    row(there, "3.", prefetch_there, m.prefetch_ms);
    row(there, "   then", resident_read, m.resident_ms);
    row(there, "4.", pinned_copy, m.copy_ms);
    there.print();
    std::printf("\n");
    tutorial::Table back(
        {{"back to the CPU"}, {"ms", tutorial::Align::right}, {"GB/s", tutorial::Align::right}});
    back.named("to_cpu");
    row(back, "5.", faulting_cpu_read, m.cpu_faults_ms);
    row(back, "6.", prefetch_home, m.prefetch_home_ms);
    row(back, "   then", resident_cpu_read, m.cpu_resident_ms);
    back.print();
}

// The walkthrough once more, with the counters on: what each step moved, and its page faults.
struct Counted {
    tutorial::UmTraffic faulting, prefetch, resident, cpu_faulting, home, cpu_resident;
};

Counted count_steps(tutorial::UmCounters& counters, std::size_t bytes, int device,
                    std::size_t& wrong) {
    tutorial::StepTraffic traffic(counters);
    wrong += walkthrough(bytes, device).wrong;
    print_traffic(counters, traffic, tutorial::format_bytes(bytes));
    return {traffic.of(faulting_read),     traffic.of(prefetch_there),
            traffic.of(resident_read),     traffic.of(faulting_cpu_read),
            traffic.of(prefetch_home),     traffic.of(resident_cpu_read)};
}

void claim_counted(tutorial::Context& ctx, const tutorial::UmCounters& counters, const Counted& c,
                   std::size_t bytes, const std::string& coherent) {
    const auto why = [&](const tutorial::UmTraffic& step, const std::string& hardware = "") {
        return why_not_counted(counters, {&step}, hardware);
    };
    ctx.claim(tutorial::counted_at_least(
                  "first_touch_pulls",
                  "a kernel's first touch of CPU-written pages pulls them to the GPU (MiB host to "
                  "device, % of the buffer)",
                  percent_of(c.faulting.htod.total, bytes), 90.0, "%",
                  "the pages were on the GPU already, or the GPU read them in place"),
              why(c.faulting, coherent));
    ctx.claim(tutorial::counted_at_least(
                  "by_page_faults",
                  "...by page faults the GPU took while that kernel ran (GPU page faults)",
                  double(c.faulting.gpu_page_faults), 1.0, "",
                  "the pages were moved before the kernel needed them"),
              why(c.faulting, coherent));
    ctx.claim(tutorial::counted_at_least(
                  "prefetch_is_requested",
                  "a prefetch to the GPU moves the buffer as a requested migration (requested "
                  "MiB host to device, % of the buffer)",
                  percent_of(c.prefetch.htod.requested, bytes), 90.0, "%",
                  "the prefetch left pages behind, or they were on the GPU already"),
              why(c.prefetch));
    ctx.claim(tutorial::counted_at_most(
                  "no_fault_after_prefetch",
                  "after the prefetch the kernel takes no page fault (GPU page faults)",
                  double(c.resident.gpu_page_faults), 0.0, "",
                  "some pages were not on the GPU when the kernel ran: was the prefetch in "
                  "another stream, or not waited for?"),
              why(c.resident));
    ctx.claim(tutorial::counted_at_least(
                  "cpu_read_pulls_back",
                  "a CPU read of GPU-written pages faults them back to the host (MiB device to "
                  "host, % of the buffer)",
                  percent_of(c.cpu_faulting.dtoh.total, bytes), 90.0, "%",
                  "the CPU read GPU memory in place (directManagedMemAccessFromHost = 1?)"),
              why(c.cpu_faulting, coherent));
    ctx.claim(tutorial::counted_at_least(
                  "prefetch_home_moves",
                  "a prefetch to the host moves GPU-written pages home before the CPU reads (MiB "
                  "device to host, % of the buffer)",
                  percent_of(c.home.dtoh.total, bytes), 90.0, "%",
                  "the prefetch left pages on the GPU, or they were on the host already"),
              why(c.home));
}

// `coherent`: why the claims about migration are not judged here (a coherent system, or a
// buffer too small), or ""; `small`: the same for the one that only compares copy rates.
void claim_times(tutorial::Context& ctx, const Medians& m, const std::string& coherent,
                 const std::string& small, const std::function<Medians()>& again) {
    ctx.claim(tutorial::at_least("prefetch_beats_faults",
                                 "a prefetch to the GPU is several times faster than the kernel's "
                                 "page faults (fault / prefetch time)",
                                 m.faults_ms / m.prefetch_ms, 2.0, "x",
                                 "the faults were cheap here: a system where the GPU reaches "
                                 "host memory without migrating (pageableMemoryAccess, a "
                                 "coherent link), or the driver prefetched on its own")
                  .again([&] {
                      const Medians n = again();
                      return n.faults_ms / n.prefetch_ms;
                  }),
              coherent);
    ctx.claim(tutorial::at_least("prefetch_near_copy",
                                 "the prefetch runs within a small factor of the pinned copy "
                                 "rate (copy time / prefetch time)",
                                 m.copy_ms / m.prefetch_ms, 0.25, "x",
                                 "the driver moved the pages in small pieces: is the buffer "
                                 "backed by small host pages that are scattered?")
                  .again([&] {
                      const Medians n = again();
                      return n.copy_ms / n.prefetch_ms;
                  }),
              small);
    ctx.claim(tutorial::at_least("prefetch_home_sooner",
                                 "back to the CPU, a prefetch brings the pages home sooner than "
                                 "a CPU read that faults them in (fault read / prefetch)",
                                 m.cpu_faults_ms / m.prefetch_home_ms, 1.3, "x",
                                 "the CPU's faults were cheap here, or the prefetch back moved "
                                 "the pages in small pieces")
                  .again([&] {
                      const Medians n = again();
                      return n.cpu_faults_ms / n.prefetch_home_ms;
                  }),
              coherent);
}

}  // namespace

tutorial::Result run_fault_vs_prefetch(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (64 << 20) : (512 << 20));
    const int runs = ctx.iters_or(ctx.quick() ? 3 : 5);
    std::printf(
        "The walkthrough, %d times over %s of managed memory: the CPU writes it, a kernel reads\n"
        "it (faulting, then after a prefetch), the pinned copy as a baseline; a kernel writes\n"
        "it, the CPU reads it (faulting, then after a prefetch home). Medians of the %d rounds.\n\n",
        runs, tutorial::format_bytes(bytes).c_str(), runs);
    std::size_t wrong = walkthrough(bytes < (8 << 20) ? bytes : (8 << 20), ctx.device).wrong;
    const Medians m = time_rounds(bytes, ctx.device, runs, wrong);  // after the warm-up above
    print_times(bytes, m);
    const double peak_gbps = tutorial::peak_memory_gbps(ctx.device);
    std::printf(
        "\nThe prefetch moved the data at %.0f%% of the pinned cudaMemcpy rate and %.1f times\n"
        "faster than the kernel's own page faults, which stop the kernel, wait for the driver\n"
        "and migrate a little at a time. Once resident, the same kernel reads at %.0f%% of the\n"
        "device memory's %.0f GB/s peak. Back to the CPU, the prefetch brought the pages home\n"
        "%.1f times sooner than the faulting read; the CPU then reads at its own speed.\n\n",
        100.0 * m.copy_ms / m.prefetch_ms, m.faults_ms / m.prefetch_ms,
        100.0 * tutorial::gb_per_s(bytes, m.resident_ms) / peak_gbps, peak_gbps,
        m.cpu_faults_ms / m.prefetch_home_ms);
    // These claims measure pages moving on access, which hardware-coherent systems may skip; and
    // below some MiB a prefetch and a few faults are both mostly fixed costs.
    const std::string coherent = tutorial::why_hardware_coherent(ctx.device);
    const std::string small = tutorial::why_too_small(
        bytes, std::size_t{16} << 20, "a few pages move in a few fixed-cost steps either way");
    claim_times(ctx, m, coherent.empty() ? small : coherent, small,
                [&] { return time_rounds(bytes, ctx.device, runs, wrong); });

    // What moved, counted by the driver once the timings are done, so that counting cannot slow
    // them; at most 64 MiB, where no record is lost (counted.hpp).
    const std::size_t counted = counted_bytes(bytes);
    tutorial::UmCounters counters;
    const Counted c = count_steps(counters, counted, ctx.device, wrong);
    std::printf(
        "\nBoth ways the same bytes cross the link: the difference is who asks. Faulting, the\n"
        "reader stops on each missing page; a prefetch moves the range as one requested\n"
        "migration, and the reader after it finds every page in place.\n\n");
    claim_counted(ctx, counters, c, counted, coherent);
    return ctx.verdict(wrong == 0, format("every value read back right in every round (%zu "
                                          "wrong), the warm-up and the counted run included",
                                          wrong));
}

TUTORIAL_SECTION(fault_vs_prefetch, run_fault_vs_prefetch);
