// Checks of section preferred_location: runs ../preferred_location.cu's walkthrough (seven
// cases, each read twice on a fresh buffer) and times every read (the speeds show whether the
// pages moved or were mapped), reads the attributes it found, then runs it once more with the
// driver's Unified Memory counters on, counting what each read moved.
#include "05_prefetch_advise/preferred_location.cu"

#include "../helpers/counted.hpp"
#include "../helpers/managed.hpp"
#include "common/device.hpp"
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

// The cases the claims read, by their place in the walkthrough's table.
constexpr int no_advice_gpu = 0, host_preferred = 1, host_preferred_prefetch = 2;
constexpr int gpu_preferred = 4, cpu_only = 6;

// Each case's reads in GB/s, medians over the rounds: by events where a kernel reads, by the
// host's clock where the CPU does; `after` is the kernel read after the CPU's two (0 where the
// GPU read).
struct Rates {
    double first[case_count] = {}, second[case_count] = {}, after[case_count] = {};
};

Rates time_rounds(std::size_t bytes, int device, int runs, Found& found, std::size_t& wrong) {
    tutorial::StepTimes times;
    for (int r = 0; r < runs; ++r) {
        found = walkthrough(bytes, device);
        for (const Seen& seen : found.cases) wrong += seen.wrong;
    }
    Rates rates;
    for (int c = 0; c < case_count; ++c) {
        const bool gpu = cases[c].gpu_reads;  // the first three cases: a kernel reads
        const auto ms = [&](const tutorial::Step& step) {
            return gpu ? times.median_ms(step) : times.median_host_ms(step);
        };
        rates.first[c] = tutorial::gb_per_s(bytes, ms(cases[c].first_read));
        rates.second[c] = tutorial::gb_per_s(bytes, ms(cases[c].second_read));
        if (!gpu) {
            rates.after[c] = tutorial::gb_per_s(bytes, times.median_ms(cases[c].kernel_after));
        }
    }
    return rates;
}

std::string where(int location) {
    if (location == cudaCpuDeviceId) return "host";
    if (location == cudaInvalidDeviceId) return "-";
    return "GPU " + std::to_string(location);
}

void print_rates(const Found& found, const Rates& r, int direct) {
    tutorial::Table table({{"case"},
                           {"1st read GB/s", tutorial::Align::right},
                           {"2nd read GB/s", tutorial::Align::right},
                           {"then GPU reads GB/s", tutorial::Align::right},
                           {"PreferredLocation"},
                           {"LastPrefetchLocation"}});
    for (int c = 0; c < case_count; ++c) {
        table.add_row({found.cases[c].name, format("%.1f", r.first[c]),
                       format("%.1f", r.second[c]), r.after[c] > 0 ? format("%.1f", r.after[c]) : "-",
                       where(found.cases[c].preferred), where(found.cases[c].last_prefetch)});
    }
    table.print();
    std::printf(
        "\nWith the host preferred, the GPU's first read (%.1f GB/s) pays for faults that map the\n"
        "pages where they are, and its second read runs at %.1f GB/s, the speed of the link to\n"
        "host memory: the pages stayed there. Without advice they migrated, and the second read\n"
        "ran at %.1f GB/s from GPU memory. A prefetch still moved them. %s\n"
        "\"then GPU reads\" is a kernel reading the buffer after the CPU's two reads: with the GPU\n"
        "preferred it ran at %.1f GB/s, so it faulted the pages back: the CPU's read had brought\n"
        "them home. The CPU's second read (%.1f GB/s) matches pages that never left the host\n"
        "(%.1f GB/s, the last row).\n\n",
        r.first[host_preferred], r.second[host_preferred], r.second[no_advice_gpu],
        direct == 1 ? "With the GPU preferred and\ndirectManagedMemAccessFromHost = 1, the CPU "
                      "may map GPU memory and read it where it is."
                    : "With the GPU preferred and\ndirectManagedMemAccessFromHost = 0, the CPU "
                      "cannot map GPU memory, so its reads migrate the\npages anyway: a "
                      "preferred location is a policy for faults, not a pin.",
        r.after[gpu_preferred], r.second[gpu_preferred], r.second[cpu_only]);
}

// Why "at most a tenth moves" is not judged on a buffer of `bytes`: where one 64 KiB block is more
// than a tenth of it, a single block the driver moves on a fault decides the claim.
std::string tiny_share(std::size_t bytes) {
    return tutorial::why_too_small(bytes, std::size_t{1} << 20,
                                   "one block the driver moves would be a large share of it");
}

// The counted claims: which reads moved the pages, where the counters can be read.
void claim_counted(tutorial::Context& ctx, const tutorial::UmCounters& counters,
                   const tutorial::StepTraffic& traffic, std::size_t bytes,
                   const std::string& coherent, const std::string& cpu_maps_gpu) {
    const tutorial::UmTraffic& plain = traffic.of(cases[no_advice_gpu].first_read);
    const tutorial::UmTraffic& mapped1 = traffic.of(cases[host_preferred].first_read);
    const tutorial::UmTraffic& mapped2 = traffic.of(cases[host_preferred].second_read);
    const tutorial::UmTraffic& prefetch = traffic.of(cases[host_preferred_prefetch].prefetched);
    const tutorial::UmTraffic& cpu1 = traffic.of(cases[gpu_preferred].first_read);
    const tutorial::UmTraffic& cpu2 = traffic.of(cases[gpu_preferred].second_read);
    std::printf(
        "\nIn the counts: with the host preferred, the kernel's faults map the pages where they\n"
        "are instead of moving them; without advice the same read moves the buffer; a prefetch\n"
        "moves it whatever the preference; with the GPU preferred, a CPU that cannot map GPU\n"
        "memory brings the pages home on its first read, and its second finds them there.\n\n");
    ctx.claim(tutorial::counted_at_least(
                  "unadvised_read_migrates",
                  "without advice, a kernel's read migrates CPU-written pages to the GPU (MiB "
                  "host to device, % of the buffer)",
                  percent_of(plain.htod.total, bytes), 90.0, "%",
                  "the GPU read the pages where they were"),
              why_not_counted(counters, {&plain}, coherent));
    ctx.claim(tutorial::counted_at_most(
                  "host_preferred_stays",
                  "with the host preferred, two kernel reads leave the pages on the host (MiB host "
                  "to device, % of the buffer)",
                  percent_of(mapped1.htod.total + mapped2.htod.total, bytes), 10.0, "%",
                  "the GPU's faults migrated the pages instead of mapping them"),
              why_not_counted(counters, {&mapped1, &mapped2},
                              coherent.empty() ? tiny_share(bytes) : coherent));
    ctx.claim(tutorial::counted_at_least(
                  "prefetch_overrides",
                  "a prefetch overrides the preference: it moves the pages to the GPU all the "
                  "same (MiB host to device, % of the buffer)",
                  percent_of(prefetch.htod.total, bytes), 90.0, "%",
                  "the prefetch did not move the pages to the GPU"),
              why_not_counted(counters, {&prefetch}));
    ctx.claim(tutorial::counted_at_least(
                  "cpu_read_brings_home",
                  "with the GPU preferred, the CPU's read still moves the pages (MiB device to "
                  "host, % of the buffer)",
                  percent_of(cpu1.dtoh.total, bytes), 90.0, "%",
                  "the CPU read GPU memory in place, and the pages stayed on the GPU"),
              why_not_counted(counters, {&cpu1}, cpu_maps_gpu));
    ctx.claim(tutorial::counted_at_most(
                  "second_cpu_read_local",
                  "...so the CPU's second read moves nothing (MiB either way)",
                  mib_of(cpu2.htod.total + cpu2.dtoh.total), 2.0, " MiB",
                  "the second read faulted too: the pages went back and forth"),
              why_not_counted(counters, {&cpu2}));
}

}  // namespace

tutorial::Result run_preferred_location(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (32 << 20) : (256 << 20));
    const int runs = ctx.quick() ? 1 : 3;
    std::printf(
        "Each row: a fresh %s managed buffer, the advice, then the same full read twice in a\n"
        "row by the processor named (medians of %d walkthrough%s). If the first read migrates\n"
        "the pages, the second runs at local speed; if it maps them where they are, both run at\n"
        "the speed of the link.\n\n",
        tutorial::format_bytes(bytes).c_str(), runs, runs == 1 ? "" : "s");
    std::size_t wrong = 0;
    Found found;
    walkthrough(bytes < (1 << 20) ? bytes : (1 << 20), ctx.device);  // warm-up
    const Rates r = time_rounds(bytes, ctx.device, runs, found, wrong);
    const int direct =
        tutorial::device_attribute(ctx.device, cudaDevAttrDirectManagedMemAccessFromHost);
    print_rates(found, r, direct);
    // The cudaMemRangeGetAttribute entry: a GPU's id, cudaCpuDeviceId for the host,
    // cudaInvalidDeviceId where no page has a preferred location.
    const Seen* c = found.cases;
    ctx.claim(tutorial::documented(
        "attribute_reports_preference",
        "cudaMemRangeGetAttribute reports the preferred location that was advised",
        c[host_preferred].preferred == cudaCpuDeviceId &&
            c[gpu_preferred].preferred == ctx.device &&
            c[no_advice_gpu].preferred == cudaInvalidDeviceId,
        where(c[host_preferred].preferred) + ", " + where(c[gpu_preferred].preferred) + " and " +
            where(c[no_advice_gpu].preferred) + " (no advice)",
        "the advice was not recorded for the range",
        tutorial::Entry{"Runtime API reference: cudaMemRangeGetAttribute",
                        "cudaCpuDeviceId cudaInvalidDeviceId", "will"}));
    // Measures pages moving on access, which hardware-coherent systems may skip; below a few
    // MiB a read is mostly launch overhead either way.
    const std::string coherent = tutorial::why_hardware_coherent(ctx.device);
    const std::string small = tutorial::why_too_small(
        bytes, std::size_t{4} << 20, "a read of a few pages is mostly launch and fault overhead");
    ctx.claim(tutorial::at_least(
                  "host_preferred_reads_remote",
                  "with the host preferred, a second GPU read still crosses the link, far slower "
                  "(GB/s, no advice / advice)",
                  r.second[no_advice_gpu] / r.second[host_preferred], 5.0, "x",
                  "the pages migrated to the GPU after all, or the GPU reads host memory as fast "
                  "as its own (a coherent CPU-GPU link)")
                  .again([&] {
                      Found f;
                      const Rates n = time_rounds(bytes, ctx.device, runs, f, wrong);
                      return n.second[no_advice_gpu] / n.second[host_preferred];
                  }),
              coherent.empty() ? small : coherent);
    // What moved, counted by the driver once the timings are done, so that counting cannot slow
    // them; at most 64 MiB, where no record is lost (counted.hpp). Where the CPU cannot map GPU
    // memory, its read must bring the pages home, preference or not.
    const std::string cpu_maps_gpu =
        direct == 1 ? "directManagedMemAccessFromHost = 1: the CPU may read GPU memory in place"
                    : coherent;
    const std::size_t counted = counted_bytes(bytes);
    {
        tutorial::UmCounters counters;
        tutorial::StepTraffic traffic(counters);
        const Found f = walkthrough(counted, ctx.device);
        for (const Seen& seen : f.cases) wrong += seen.wrong;
        print_traffic(counters, traffic, tutorial::format_bytes(counted));
        claim_counted(ctx, counters, traffic, counted, coherent, cpu_maps_gpu);
    }
    return ctx.verdict(wrong == 0,
                       "every read, GPU or CPU, first or second, returned the sum of "
                       "the data written, in the timed and the counted runs");
}

TUTORIAL_SECTION(preferred_location, run_preferred_location);
