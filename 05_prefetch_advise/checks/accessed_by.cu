// Checks of section accessed_by: runs ../accessed_by.cu's walkthrough round after round and times
// the appendix's write, CPU read and append without and with the hint for the host (the claims
// branch on directManagedMemAccessFromHost), then once more with the driver's Unified Memory
// counters on, counting what each step moved, the GPU side of the advice included.
#include "05_prefetch_advise/accessed_by.cu"

#include "../helpers/counted.hpp"
#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/text.hpp"

#include <cstdio>
#include <functional>
#include <string>

using tutorial::format;

namespace {

// Medians over the rounds, [hint][write, read, append]: the kernels by their events, the CPU's
// read by the host's clock.
struct Medians {
    double ms[2][3];
};

Medians time_rounds(int n, int device, int runs, Found& found) {
    tutorial::StepTimes times;
    for (int r = 0; r < runs; ++r) {
        const Found f = walkthrough(n, device);
        found.wrong += f.wrong;
        found.host_listed[0] = f.host_listed[0];
        found.host_listed[1] = f.host_listed[1];
    }
    Medians m{};
    for (int hint = 0; hint < 2; ++hint) {
        m.ms[hint][0] = times.median_ms(kernel_writes[hint]);
        m.ms[hint][1] = times.median_host_ms(cpu_reads[hint]);
        m.ms[hint][2] = times.median_ms(kernel_appends[hint]);
    }
    return m;
}

void print_times(const Medians& m, int direct) {
    tutorial::Table table({{"hint"},
                           {"write ms", tutorial::Align::right},
                           {"CPU read ms", tutorial::Align::right},
                           {"append ms", tutorial::Align::right}});
    for (int hint = 0; hint < 2; ++hint) {
        table.add_row({hint ? "cudaMemAdviseSetAccessedBy(host)" : "none",
                       format("%.2f", m.ms[hint][0]), format("%.2f", m.ms[hint][1]),
                       format("%.2f", m.ms[hint][2])});
    }
    table.print();
    const auto change = [&](int step) {
        return format("%+.0f%%", 100.0 * (m.ms[1][step] / m.ms[0][step] - 1.0));
    };
    std::printf(
        "\nWith the hint: write %s, CPU read %s, append %s. AccessedBy asks the driver to keep\n"
        "the pages mapped for the CPU wherever they live, where a mapping can be made.\n%s\n\n",
        change(0).c_str(), change(1).c_str(), change(2).c_str(),
        direct
            ? "Here directManagedMemAccessFromHost = 1: the CPU can map GPU memory, so by the\n"
              "Programming Guide (N.1.7) its reads leave the pages on the GPU, and the append\n"
              "finds them there without faults."
            : "Here directManagedMemAccessFromHost = 0: the CPU cannot map GPU memory, so by the\n"
              "Programming Guide (N.1.7) its reads fault and migrate the pages to the host, and\n"
              "the append faults them back: the hint cannot remove a migration on this system.");
}

// The timing claim of each value of directManagedMemAccessFromHost; the other one says why it
// is not judged here.
void claim_times(tutorial::Context& ctx, const Medians& m, int direct, const std::string& small,
                 const std::function<Medians()>& again) {
    const std::string not_direct = "directManagedMemAccessFromHost = 0 here";
    const std::string direct_here = "directManagedMemAccessFromHost = 1 here";
    ctx.claim(tutorial::at_least("hint_speeds_append",
                                 "with direct host access the hint makes the append faster "
                                 "(append without / with)",
                                 m.ms[0][2] / m.ms[1][2], 1.2, "x",
                                 "the CPU's reads migrated the pages to the host after all")
                  .again([&] {
                      const Medians n = again();
                      return n.ms[0][2] / n.ms[1][2];
                  }),
              direct ? small : not_direct);
    ctx.claim(tutorial::at_most("hint_spares_nothing",
                                "without direct host access the hint does not make the append "
                                "several times cheaper (without / with)",
                                m.ms[0][2] / m.ms[1][2], 3.0, "x",
                                "the hint kept the pages on the GPU after all: does the CPU reach "
                                "GPU memory in place here (a coherent link)?")
                  .again([&] {
                      const Medians n = again();
                      return n.ms[0][2] / n.ms[1][2];
                  }),
              direct ? direct_here : small);
}

// Why "at most a tenth moves" is not judged on a buffer of `bytes`: where one 64 KiB block is more
// than a tenth of it, a single block the driver moves on a fault decides the claim.
std::string tiny_share(std::size_t bytes) {
    return tutorial::why_too_small(bytes, std::size_t{1} << 20,
                                   "one block the driver moves would be a large share of it");
}

// Why "the pages stay on the host" cannot be judged: a hardware-coherent system, or pages the
// driver moved on the GPU's access counters. AccessedBy opts managed memory into migrations
// driven by access counters (the Programming Guide, N.1.8), so where those are on, the pages may
// move while the advice holds.
std::string why_pages_may_move(const std::string& coherent, const std::string& small,
                               const tutorial::UmTraffic& a, const tutorial::UmTraffic& b) {
    if (!coherent.empty()) return coherent;
    if (a.htod.access_counters + b.htod.access_counters == 0) return small;
    return "the driver moved pages on the GPU's access counters, which AccessedBy opts managed "
           "memory into (the Programming Guide, N.1.8): where they are on, the pages may move";
}

// The counted claims: what the CPU's read and the append moved with the hint for the host (each
// value of directManagedMemAccessFromHost; the other pair is not judged), and what a mapped GPU's
// reads moved.
void claim_counted(tutorial::Context& ctx, const tutorial::UmCounters& counters,
                   const tutorial::StepTraffic& traffic, std::size_t bytes, int direct,
                   const std::string& coherent) {
    const tutorial::UmTraffic& read = traffic.of(cpu_reads[1]);
    const tutorial::UmTraffic& append = traffic.of(kernel_appends[1]);
    const tutorial::UmTraffic& plain = traffic.of(gpu_reads[0]);
    const tutorial::UmTraffic& mapped1 = traffic.of(gpu_reads[1]);
    const tutorial::UmTraffic& mapped2 = traffic.of(gpu_reads_again);
    const std::string is_direct = "directManagedMemAccessFromHost = 1 here";
    const std::string not_direct = "directManagedMemAccessFromHost = 0 here";
    const auto when = [&](bool wanted, const tutorial::UmTraffic& step, const std::string& hw) {
        return wanted == (direct != 0) ? why_not_counted(counters, {&step}, hw)
                                       : (direct ? is_direct : not_direct);
    };
    ctx.claim(tutorial::counted_at_most(
                  "cpu_reads_in_place",
                  "with direct host access and the hint, the CPU reads the pages in place: at "
                  "most a tenth of them moves (MiB device to host, % of the buffer)",
                  percent_of(read.dtoh.total, bytes), 10.0, "%",
                  "the CPU's reads migrated the pages to the host after all"),
              when(true, read, tiny_share(bytes)));
    ctx.claim(tutorial::counted_at_most(
                  "append_finds_them",
                  "...and the append finds them on the GPU: at most a tenth moves (MiB host to "
                  "device, % of the buffer)",
                  percent_of(append.htod.total, bytes), 10.0, "%", "the pages had left the GPU"),
              when(true, append, tiny_share(bytes)));
    ctx.claim(tutorial::counted_at_least(
                  "cpu_read_migrates",
                  "without direct host access, a CPU read migrates the hinted pages (MiB device to "
                  "host, % of the buffer)",
                  percent_of(read.dtoh.total, bytes), 90.0, "%",
                  "the CPU read GPU memory in place after all (a coherent link?)"),
              when(false, read, coherent));
    ctx.claim(tutorial::counted_at_least(
                  "append_pulls_back",
                  "...and the append pulls them back to the GPU (MiB host to device, % of the "
                  "buffer)",
                  percent_of(append.htod.total, bytes), 90.0, "%",
                  "the pages were still on the GPU: the CPU read them in place"),
              when(false, append, coherent));
    ctx.claim(tutorial::counted_at_least(
                  "unadvised_read_migrates",
                  "without advice, a kernel's read migrates CPU-written pages to the GPU (MiB "
                  "host to device, % of the buffer)",
                  percent_of(plain.htod.total, bytes), 90.0, "%",
                  "the GPU read the pages where they were"),
              why_not_counted(counters, {&plain}, coherent));
    ctx.claim(tutorial::counted_at_most(
                  "mapped_pages_stay",
                  "with AccessedBy(GPU), two kernel reads leave the pages on the host (MiB host to "
                  "device, % of the buffer)",
                  percent_of(mapped1.htod.total + mapped2.htod.total, bytes), 10.0, "%",
                  "the GPU's faults migrated the pages instead of reading them through the "
                  "advice's mapping"),
              why_not_counted(counters, {&mapped1, &mapped2},
                              why_pages_may_move(coherent, tiny_share(bytes), mapped1, mapped2)));
}

}  // namespace

tutorial::Result run_accessed_by(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    const int direct =
        tutorial::device_attribute(ctx.device, cudaDevAttrDirectManagedMemAccessFromHost);
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (16 << 20) : (256 << 20));
    const int n = static_cast<int>(bytes / sizeof(int));
    const int runs = ctx.iters_or(ctx.quick() ? 2 : 5);
    std::printf(
        "The appendix's sequence on %s of managed ints: a kernel writes ret[i] = a + b + i, the\n"
        "CPU reads every value, a kernel appends a + b + i; without the hint, then with it.\n"
        "directManagedMemAccessFromHost = %d. Medians of %d walkthroughs, each on fresh\n"
        "allocations.\n\n",
        tutorial::format_bytes(bytes).c_str(), direct, runs);
    Found found;
    found.wrong += walkthrough(n < (1 << 18) ? n : (1 << 18), ctx.device).wrong;  // warm-up
    const Medians m = time_rounds(n, ctx.device, runs, found);
    print_times(m, direct);
    ctx.claim(tutorial::observed(
        "host_listed_where_hinted",
        "cudaMemRangeGetAttribute(AccessedBy) lists the host, as cudaCpuDeviceId (-1), exactly "
        "where the hint was given",
        found.host_listed[1] && !found.host_listed[0],
        format("with the hint: %s; without: %s",
               found.host_listed[1] ? "host listed" : "host NOT listed",
               found.host_listed[0] ? "host listed" : "nothing"),
        "the cudaMemRangeGetAttribute entry says AccessedBy returns a list of device ids, and "
        "does not say how the host appears in it"));
    const std::string small = tutorial::why_too_small(
        bytes, std::size_t{4} << 20, "an append of a few pages is mostly launch and fault overhead");
    claim_times(ctx, m, direct, small,
                [&] { return time_rounds(n, ctx.device, runs, found); });

    // What moved, counted by the driver once the timings are done, so that counting cannot slow
    // them; at most 64 MiB, where no record is lost (counted.hpp).
    const std::size_t counted = counted_bytes(bytes);
    {
        tutorial::UmCounters counters;
        tutorial::StepTraffic traffic(counters);
        found.wrong += walkthrough(static_cast<int>(counted / sizeof(int)), ctx.device).wrong;
        print_traffic(counters, traffic, tutorial::format_bytes(counted));
        std::printf(
            "\nThe CPU's read of GPU-written pages, and the append after it, with and without the\n"
            "hint for the host; then a GPU with AccessedBy reading CPU-written pages over the\n"
            "link, against a kernel that faults them over.\n\n");
        claim_counted(ctx, counters, traffic, counted, direct,
                      tutorial::why_hardware_coherent(ctx.device));
    }
    return ctx.verdict(found.wrong == 0,
                       format("every value read by the CPU after write, and after append, was "
                              "right (%d walkthroughs, and the counted one)",
                              runs));
}

TUTORIAL_SECTION(accessed_by, run_accessed_by);
