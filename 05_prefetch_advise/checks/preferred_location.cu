// Checks of section preferred_location: each case of ../preferred_location.cu set up on a fresh
// buffer and read twice, timed (the speeds show whether the pages moved or were mapped), the
// attributes read back, then four of the cases counted by the driver.
#include "05_prefetch_advise/preferred_location.cu"

#include "../helpers/counted.hpp"
#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <iterator>
#include <string>

using tutorial::format;

namespace {

struct Reads {
    double gbps[2] = {};   // the first and the second full read
    double gpu_after = 0;  // after two CPU reads: a kernel's read, which faults where the
                           // pages have come to the CPU (0 for rows the GPU reads)
    int wrong = 0;         // reads whose sum was not the data's
    std::string preferred;
    std::string last_prefetch;
};

std::string where(int location) {
    if (location == cudaCpuDeviceId) return "host";
    if (location == cudaInvalidDeviceId) return "-";
    return "GPU " + std::to_string(location);
}

// A fresh managed buffer, the case's advice and writes, then two timed full reads.
Reads run_case(const Case& c, std::size_t count, int device) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    const std::uint32_t seed = 11;
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    set_up(c, data, count, seed, device);
    Reads reads;
    for (double& rate : reads.gbps) {
        if (c.gpu_reads) {
            const DeviceSum s = timed_device_sum(data, count);
            reads.wrong += s.sum != pattern_sum(count, seed);
            rate = tutorial::gb_per_s(bytes, s.ms);
        } else {
            tutorial::HostTimer timer;
            const std::uint64_t sum = sum_on_host(data, count);
            rate = tutorial::gb_per_s(bytes, timer.elapsed_ms());
            reads.wrong += sum != pattern_sum(count, seed);  // worked out after the timer stops
        }
    }
    if (!c.gpu_reads) {
        const DeviceSum s = timed_device_sum(data, count);
        reads.wrong += s.sum != pattern_sum(count, seed);
        reads.gpu_after = tutorial::gb_per_s(bytes, s.ms);
    }
    reads.preferred =
        where(location_attribute(data, bytes, cudaMemRangeAttributePreferredLocation));
    reads.last_prefetch =
        where(location_attribute(data, bytes, cudaMemRangeAttributeLastPrefetchLocation));
    CUDA_CHECK(cudaFree(data));
    return reads;
}

// The section's documented and timing claims, from the rows in the order run_preferred_location
// makes them.
void claim_lessons(tutorial::Context& ctx, const Reads* reads) {
    const std::string gpu_name = where(ctx.device);
    // The timing claim measures pages moving on access, which hardware-coherent systems may skip.
    const std::string coherent = tutorial::why_hardware_coherent(ctx.device);
    // The entry: a GPU's id, cudaCpuDeviceId for the host, cudaInvalidDeviceId where no page has
    // a preferred location.
    ctx.claim(tutorial::documented(
        "cudaMemRangeGetAttribute reports the preferred location that was advised",
        reads[1].preferred == "host" && reads[4].preferred == gpu_name && reads[0].preferred == "-",
        "host, " + reads[4].preferred + " and " + reads[0].preferred + " (no advice)",
        "the advice was not recorded for the range",
        "Runtime API reference: cudaMemRangeGetAttribute"));
    ctx.claim(tutorial::at_least(
                  "with the host preferred, every GPU read crosses the link: its second read is "
                  "much slower than a second read without advice (2nd read without advice / "
                  "with the host preferred)",
                  reads[0].gbps[1] / reads[1].gbps[1], 5.0, "x",
                  "the pages migrated to the GPU after all, or the GPU reads host memory as fast "
                  "as its own (a coherent CPU-GPU link)"),
              coherent);
}

// What the rows show, in words (`reads` in the order run_preferred_location makes them).
void narrate(const Reads* reads, int direct) {
    std::printf(
        "\nWith the host preferred, the GPU's first read (%.1f GB/s) pays for faults that map the\n"
        "pages where they are, and its second read runs at %.1f GB/s, the speed of the link to\n"
        "host memory: the pages stayed there. Without advice they migrated, and the second read\n"
        "ran at %.1f GB/s from GPU memory. A prefetch still moved them. %s\n",
        reads[1].gbps[0], reads[1].gbps[1], reads[0].gbps[1],  // preferred host; no advice
        direct == 1
            ? "With the GPU preferred and\ndirectManagedMemAccessFromHost = 1, the CPU may map GPU "
              "memory and read it where it is:\ncompare the last row's two reads."
            : "With the GPU preferred and\ndirectManagedMemAccessFromHost = 0, the CPU cannot map "
              "GPU memory, so its reads migrate the\npages anyway: a preferred location is a "
              "policy for faults, not a pin.");
    std::printf(
        "\"then GPU reads\" is a kernel reading the buffer after the CPU's two reads: with the "
        "GPU\npreferred it ran at %.1f GB/s, against %.1f GB/s for pages already on the GPU, so "
        "it\nfaulted them back: the CPU's read had brought them home. The CPU's second read "
        "(%.1f GB/s)\nmatches pages that never left the host (%.1f GB/s, the last row).\n\n",
        reads[4].gpu_after, reads[0].gbps[1], reads[4].gbps[1], reads[6].gbps[1]);
}

// Four of the cases once more, on buffers of at most 64 MiB, with the driver's Unified Memory
// counters on: what each read moved. `cases` in the order run_preferred_location lists them.
struct Counted {
    tutorial::UmTraffic plain_read;            // no advice: a kernel reads CPU-written pages
    tutorial::UmTraffic host_reads[2];         // preferred host: a kernel reads, twice
    tutorial::UmTraffic prefetch;              // preferred host: set-up with a prefetch to the GPU
    tutorial::UmTraffic gpu_preferred_cpu[2];  // preferred GPU: the CPU reads, twice
};

Counted count_steps(tutorial::UmCounters& counters, const Case* cases, std::size_t bytes,
                    int device, int& wrong) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const std::uint32_t seed = 12;
    CountedSteps steps(counters);
    Counted c;
    std::uint32_t* data = nullptr;
    const auto kernel_reads = [&] {
        wrong += sum_on_device(data, count) != pattern_sum(count, seed);
    };
    const auto cpu_reads = [&] { wrong += sum_on_host(data, count) != pattern_sum(count, seed); };
    // A fresh buffer set up as case `k` says; the set-up is a counted step where it has a name.
    const auto fresh = [&](const Case& k, const char* counted_name) {
        if (data != nullptr) CUDA_CHECK(cudaFree(data));
        CUDA_CHECK(cudaMallocManaged(&data, bytes));
        const auto run = [&] { set_up(k, data, count, seed, device); };
        if (counted_name == nullptr) run();
        return counted_name != nullptr ? steps.step(counted_name, run) : tutorial::UmTraffic{};
    };
    fresh(cases[0], nullptr);
    c.plain_read = steps.step("no advice, CPU writes: a kernel reads", kernel_reads);
    fresh(cases[1], nullptr);
    c.host_reads[0] = steps.step("preferred host, CPU writes: a kernel reads", kernel_reads);
    c.host_reads[1] = steps.step("preferred host, CPU writes: the kernel again", kernel_reads);
    c.prefetch = fresh(cases[2], "preferred host, CPU writes, then a prefetch to the GPU");
    fresh(cases[4], nullptr);
    c.gpu_preferred_cpu[0] = steps.step("preferred GPU, GPU writes: the CPU reads", cpu_reads);
    c.gpu_preferred_cpu[1] = steps.step("preferred GPU, GPU writes: the CPU again", cpu_reads);
    steps.step("preferred GPU, GPU writes: then a kernel reads", kernel_reads);
    CUDA_CHECK(cudaFree(data));
    steps.print("What the driver moved in each step, " + tutorial::format_bytes(bytes) +
                " (its Unified Memory counters):");
    return c;
}

// The counted claims: which accesses moved the pages, where the counters can be read.
void claim_counted(tutorial::Context& ctx, const tutorial::UmCounters& counters, const Counted& c,
                   std::size_t bytes, const std::string& coherent,
                   const std::string& cpu_maps_gpu) {
    const tutorial::UmTraffic* host_reads[] = {&c.host_reads[0], &c.host_reads[1]};
    std::printf(
        "\nIn the counts: with the host preferred, the kernel's faults map the pages where they\n"
        "are instead of moving them; without advice the same read moves the buffer; a prefetch\n"
        "moves it whatever the preference; with the GPU preferred, a CPU that cannot map GPU\n"
        "memory brings the pages home on its first read, and its second finds them there.\n\n");
    ctx.claim(tutorial::counted_at_least(
                  "without advice, a kernel's read migrates CPU-written pages to the GPU (MiB "
                  "host to device, % of the buffer)",
                  percent_of(c.plain_read.htod.total, bytes), 90.0, "%",
                  "the GPU read the pages where they were"),
              why_not_counted(counters, {&c.plain_read}, coherent));
    ctx.claim(tutorial::counted_at_most(
                  "with the host preferred, two kernel reads leave the pages on the host: at most "
                  "a tenth of them moves (MiB host to device, % of the buffer)",
                  percent_of(host_reads[0]->htod.total + host_reads[1]->htod.total, bytes), 10.0,
                  "%", "the GPU's faults migrated the pages instead of mapping them"),
              why_not_counted(counters, {host_reads[0], host_reads[1]}, coherent));
    ctx.claim(tutorial::counted_at_least(
                  "a prefetch overrides the preference: it moves the pages to the GPU all the "
                  "same (MiB host to device, % of the buffer)",
                  percent_of(c.prefetch.htod.total, bytes), 90.0, "%",
                  "the prefetch did not move the pages to the GPU"),
              why_not_counted(counters, {&c.prefetch}));
    ctx.claim(tutorial::counted_at_least(
                  "with the GPU preferred, a CPU read still brings the pages to the host (MiB "
                  "device to host, % of the buffer)",
                  percent_of(c.gpu_preferred_cpu[0].dtoh.total, bytes), 90.0, "%",
                  "the CPU read GPU memory in place, and the pages stayed on the GPU"),
              why_not_counted(counters, {&c.gpu_preferred_cpu[0]}, cpu_maps_gpu));
    ctx.claim(tutorial::counted_at_most(
                  "...so the CPU's second read moves nothing (MiB either way)",
                  mib_of(c.gpu_preferred_cpu[1].htod.total + c.gpu_preferred_cpu[1].dtoh.total),
                  2.0, " MiB", "the second read faulted too: the pages went back and forth"),
              why_not_counted(counters, {&c.gpu_preferred_cpu[1]}));
}

}  // namespace

tutorial::Result run_preferred_location(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (32 << 20) : (256 << 20));
    const cudaMemLocation gpu = gpu_location(ctx.device);
    const cudaMemLocation host = host_location();
    std::printf(
        "Each row: a fresh %s managed buffer, the advice, then the same full read twice in a\n"
        "row by the processor named. If the first read migrates the pages, the second runs at\n"
        "local speed; if it maps them where they are, both run at the speed of the link.\n\n",
        tutorial::format_bytes(bytes).c_str());
    const Case cases[] = {
        {"no advice, CPU writes, GPU reads", false, host, false, Prefetch::none, true},
        {"preferred host, CPU writes, GPU reads", true, host, false, Prefetch::none, true},
        {"preferred host, prefetch to GPU, GPU reads", true, host, false, Prefetch::to_gpu, true},
        {"no advice, GPU writes, CPU reads", false, gpu, true, Prefetch::none, false},
        {"preferred GPU, GPU writes, CPU reads", true, gpu, true, Prefetch::none, false},
        {"no advice, GPU writes, prefetch to host, CPU reads", false, gpu, true, Prefetch::to_host,
         false},
        {"no advice, CPU writes, CPU reads", false, gpu, false, Prefetch::none, false},
    };
    tutorial::Table table({{"case"},
                           {"1st read GB/s", tutorial::Align::right},
                           {"2nd read GB/s", tutorial::Align::right},
                           {"then GPU reads GB/s", tutorial::Align::right},
                           {"PreferredLocation"},
                           {"LastPrefetchLocation"}});
    int wrong = 0;
    Reads reads[std::size(cases)];
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        reads[i] = run_case(cases[i], bytes / sizeof(std::uint32_t), ctx.device);
        wrong += reads[i].wrong;
        table.add_row({cases[i].name, format("%.1f", reads[i].gbps[0]),
                       format("%.1f", reads[i].gbps[1]),
                       cases[i].gpu_reads ? "-" : format("%.1f", reads[i].gpu_after),
                       reads[i].preferred, reads[i].last_prefetch});
    }
    table.print();
    const int direct =
        tutorial::device_attribute(ctx.device, cudaDevAttrDirectManagedMemAccessFromHost);
    narrate(reads, direct);
    claim_lessons(ctx, reads);
    // What moved, counted by the driver once the timings are done, so that recording cannot slow
    // them. Where the CPU cannot map GPU memory, its read must bring the pages home, preference
    // or not.
    const std::string cpu_maps_gpu =
        direct == 1 ? "directManagedMemAccessFromHost = 1: the CPU may read GPU memory in place"
                    : tutorial::why_hardware_coherent(ctx.device);
    {
        tutorial::UmCounters counters;
        const std::size_t counted = counted_bytes(bytes);
        const Counted c = count_steps(counters, cases, counted, ctx.device, wrong);
        claim_counted(ctx, counters, c, counted, tutorial::why_hardware_coherent(ctx.device),
                      cpu_maps_gpu);
    }
    return ctx.verdict(wrong == 0,
                       "every read, GPU or CPU, first or second, returned the sum of "
                       "the data written, in the timed and the counted steps");
}

TUTORIAL_SECTION(preferred_location, run_preferred_location);
