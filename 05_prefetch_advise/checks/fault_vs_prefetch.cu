// Checks of section fault_vs_prefetch: host-written data read by a kernel (faulting, or after
// ../fault_vs_prefetch.cu's prefetch) and kernel-written data read by the CPU (faulting back, or
// prefetched home), timed against the pinned copy; then the same steps counted by the driver.
#include "05_prefetch_advise/fault_vs_prefetch.cu"

#include "../helpers/counted.hpp"
#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;

namespace {

struct Medians {
    double faults_ms = 0.0;    // the reader faults the pages over on demand
    double prefetch_ms = 0.0;  // cudaMemPrefetchAsync moves them first
    double resident_ms = 0.0;  // the reader, after the prefetch
};

// Sends every page of `data` to the host, untimed, so that each run starts from the same place.
void pages_to_host(const void* data, std::size_t bytes) {
    prefetch_to_host(data, bytes, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
}

// Host-written data read by a kernel: (a) faulting, (b) after a prefetch to the GPU.
Medians to_gpu(std::uint32_t* managed, std::size_t count, int device, int runs, int& wrong) {
    const std::size_t bytes = count * sizeof *managed;
    const std::uint64_t expected = pattern_sum(count, 3);
    std::vector<double> faults, prefetches, resident;
    tutorial::EventTimer timer;
    for (int r = 0; r < runs; ++r) {
        pages_to_host(managed, bytes);
        const DeviceSum s = timed_device_sum(managed, count);
        wrong += s.sum != expected;
        faults.push_back(s.ms);
    }
    for (int r = 0; r < runs; ++r) {
        pages_to_host(managed, bytes);
        timer.start();
        prefetch_to_gpu(managed, bytes, device, nullptr);
        timer.stop();
        prefetches.push_back(timer.elapsed_ms());
        const DeviceSum s = timed_device_sum(managed, count);
        wrong += s.sum != expected;
        resident.push_back(s.ms);
    }
    return {tutorial::median(faults), tutorial::median(prefetches), tutorial::median(resident)};
}

// The explicit baseline: cudaMemcpy from pinned host memory to device memory.
double pinned_copy_ms(std::size_t count, int runs, int& wrong) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    const Explicit e = pinned_and_device(count, 3);
    const double ms = tutorial::median_event_ms(1, runs, [&] { copy_to_device(e, bytes); });
    wrong += timed_device_sum(e.device, count).sum != pattern_sum(count, 3);
    free_explicit(e);
    return ms;
}

// Kernel-written data read by the CPU: faulting back, or after a prefetch to the host. Each run
// writes its own seed, so that an element check tells this run's data from the last one's.
Medians to_cpu(std::uint32_t* managed, std::size_t count, int runs, int& wrong) {
    const std::size_t bytes = count * sizeof *managed;
    std::vector<double> faults, prefetches, resident;
    tutorial::EventTimer timer;
    for (int r = 0; r < runs; ++r) {
        const std::uint32_t seed = 4 + 2 * r;
        const std::uint64_t expected = pattern_sum(count, seed);
        timed_device_fill(managed, count, seed);  // pages now on the GPU
        tutorial::HostTimer host_timer;
        wrong += sum_on_host(managed, count) != expected;
        faults.push_back(host_timer.elapsed_ms());
        // The sum cannot tell one seed from another (see patterns.hpp); the elements can.
        wrong += mismatches_on_host(managed, count, seed) != 0;

        timed_device_fill(managed, count, seed + 1);
        timer.start();
        prefetch_to_host(managed, bytes, nullptr);
        timer.stop();
        prefetches.push_back(timer.elapsed_ms());
        host_timer.restart();
        wrong += sum_on_host(managed, count) != expected;
        resident.push_back(host_timer.elapsed_ms());
        wrong += mismatches_on_host(managed, count, seed + 1) != 0;
    }
    return {tutorial::median(faults), tutorial::median(prefetches), tutorial::median(resident)};
}

void print_tables(std::size_t bytes, const Medians& gpu, double copy_ms, const Medians& cpu) {
    const auto row = [&](tutorial::Table& table, const char* what, double ms) {
        table.add_row({what, format("%.2f", ms), format("%.1f", tutorial::gb_per_s(bytes, ms))});
    };
    tutorial::Table there(
        {{"to the GPU"}, {"ms", tutorial::Align::right}, {"GB/s", tutorial::Align::right}});
    there.named("to_gpu");
    row(there, "(a) kernel reads, pages fault in on demand", gpu.faults_ms);
    row(there, "(b) cudaMemPrefetchAsync to the GPU", gpu.prefetch_ms);
    row(there, "    then the kernel reads resident pages", gpu.resident_ms);
    row(there, "(c) cudaMemcpy pinned -> device (baseline)", copy_ms);
    there.print();
    std::printf("\n");
    tutorial::Table back(
        {{"back to the CPU"}, {"ms", tutorial::Align::right}, {"GB/s", tutorial::Align::right}});
    back.named("to_cpu");
    row(back, "CPU reads, pages fault back on demand", cpu.faults_ms);
    row(back, "cudaMemPrefetchAsync to the host", cpu.prefetch_ms);
    row(back, "    then the CPU reads resident pages", cpu.resident_ms);
    back.print();
}

// The same steps once more, on a buffer of at most 64 MiB, with the driver's Unified Memory
// counters on: what each step moved, and the page faults it took.
struct Counted {
    tutorial::UmTraffic faulting_read, prefetch_to_gpu, resident_read;
    tutorial::UmTraffic faulting_cpu_read, prefetch_home, resident_cpu_read;
};

Counted count_steps(tutorial::UmCounters& counters, std::size_t bytes, int device, int& wrong) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    // Untimed, uncounted: the pages are made in host memory.
    std::uint32_t* managed = managed_written_by_cpu(count, 3);
    CountedSteps steps(counters);
    Counted c;
    const auto kernel_reads = [&] {
        wrong += timed_device_sum(managed, count).sum != pattern_sum(count, 3);
    };
    const auto cpu_reads = [&](std::uint32_t seed) {
        return [&, seed] { wrong += mismatches_on_host(managed, count, seed) != 0; };
    };
    c.faulting_read = steps.step("(a) kernel reads, pages fault in on demand", kernel_reads);
    pages_to_host(managed, bytes);
    c.prefetch_to_gpu = steps.step("(b) cudaMemPrefetchAsync to the GPU",
                                   [&] { prefetch_to_gpu(managed, bytes, device, nullptr); });
    c.resident_read = steps.step("    then the kernel reads resident pages", kernel_reads);
    timed_device_fill(managed, count, 4);  // on the GPU, where the pages are
    c.faulting_cpu_read = steps.step("CPU reads, pages fault back on demand", cpu_reads(4));
    timed_device_fill(managed, count, 5);  // the kernel's faults take the pages to the GPU again
    c.prefetch_home = steps.step("cudaMemPrefetchAsync to the host",
                                 [&] { prefetch_to_host(managed, bytes, nullptr); });
    c.resident_cpu_read = steps.step("    then the CPU reads resident pages", cpu_reads(5));
    CUDA_CHECK(cudaFree(managed));
    steps.print("What the driver moved in each step, " + tutorial::format_bytes(bytes) +
                " (its Unified Memory counters):");
    return c;
}

// The counted claims: what faulted and what moved, where the counters can be read.
void claim_counted(tutorial::Context& ctx, const tutorial::UmCounters& counters, const Counted& c,
                   std::size_t bytes, const std::string& coherent) {
    std::printf(
        "\nBoth ways the same bytes cross the link: the difference is who asks. Faulting, the\n"
        "kernel (or the CPU) stops on each missing page; a prefetch moves the range as one\n"
        "requested migration, and the reader after it finds every page in place.\n\n");
    ctx.claim(tutorial::counted_at_least(
                  "a kernel's first touch of CPU-written pages pulls them to the GPU (MiB host to "
                  "device, % of the buffer)",
                  percent_of(c.faulting_read.htod.total, bytes), 90.0, "%",
                  "the pages were on the GPU already, or the GPU read them in place"),
              why_not_counted(counters, {&c.faulting_read}, coherent));
    ctx.claim(tutorial::counted_at_least(
                  "...by page faults: the GPU faulted while that kernel ran (GPU page faults)",
                  double(c.faulting_read.gpu_page_faults), 1.0, "",
                  "the pages were moved before the kernel needed them"),
              why_not_counted(counters, {&c.faulting_read}, coherent));
    ctx.claim(tutorial::counted_at_least(
                  "a prefetch to the GPU moves the buffer as a requested migration (requested MiB "
                  "host to device, % of the buffer)",
                  percent_of(c.prefetch_to_gpu.htod.requested, bytes), 90.0, "%",
                  "the prefetch left pages behind, or they were on the GPU already"),
              why_not_counted(counters, {&c.prefetch_to_gpu}));
    ctx.claim(tutorial::counted_at_most(
                  "after the prefetch the kernel takes no page fault (GPU page faults)",
                  double(c.resident_read.gpu_page_faults), 0.0, "",
                  "some pages were not on the GPU when the kernel ran: was the prefetch in "
                  "another stream, or not waited for?"),
              why_not_counted(counters, {&c.resident_read}));
    ctx.claim(tutorial::counted_at_least(
                  "a CPU read of GPU-written pages faults them back to the host (MiB device to "
                  "host, % of the buffer)",
                  percent_of(c.faulting_cpu_read.dtoh.total, bytes), 90.0, "%",
                  "the CPU read GPU memory in place (directManagedMemAccessFromHost = 1?)"),
              why_not_counted(counters, {&c.faulting_cpu_read}, coherent));
    ctx.claim(tutorial::counted_at_least(
                  "a prefetch to the host moves GPU-written pages home before the CPU reads (MiB "
                  "device to host, % of the buffer)",
                  percent_of(c.prefetch_home.dtoh.total, bytes), 90.0, "%",
                  "the prefetch left pages on the GPU, or they were on the host already"),
              why_not_counted(counters, {&c.prefetch_home}));
}

}  // namespace

tutorial::Result run_fault_vs_prefetch(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (64 << 20) : (512 << 20));
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const int runs = ctx.iters_or(ctx.quick() ? 2 : 5);
    std::printf(
        "%s of managed memory, written by the CPU, read by a kernel; then written by a kernel\n"
        "and read by the CPU. Before every run the pages are sent back where the previous\n"
        "writer left them (a prefetch, untimed). Median of %d runs.\n\n",
        tutorial::format_bytes(bytes).c_str(), runs);

    std::uint32_t* managed = managed_written_by_cpu(count, 3);  // every page now in host memory
    int wrong = 0;
    const Medians gpu = to_gpu(managed, count, ctx.device, runs, wrong);
    const double copy_ms = pinned_copy_ms(count, runs, wrong);
    const Medians cpu = to_cpu(managed, count, runs, wrong);
    CUDA_CHECK(cudaFree(managed));

    print_tables(bytes, gpu, copy_ms, cpu);
    const double peak_gbps = tutorial::peak_memory_gbps(ctx.device);
    const double resident_gbps = tutorial::gb_per_s(bytes, gpu.resident_ms);
    const double resident_share = resident_gbps / peak_gbps;
    std::printf(
        "\nThe prefetch moved the data at %.0f%% of the pinned cudaMemcpy rate and %.1f times\n"
        "faster than the kernel's own page faults, which stop the kernel, wait for the driver\n"
        "and migrate a little at a time. Once resident, the same kernel reads at %.0f%% of the\n"
        "device memory's %.0f GB/s peak.\n\n",
        100.0 * copy_ms / gpu.prefetch_ms, gpu.faults_ms / gpu.prefetch_ms, 100.0 * resident_share,
        peak_gbps);
    // These claims measure pages moving on access, which hardware-coherent systems may skip.
    const std::string coherent = tutorial::why_hardware_coherent(ctx.device);
    ctx.claim(tutorial::at_least("a prefetch to the GPU is several times faster than the "
                                 "kernel's page faults (fault time / prefetch time)",
                                 gpu.faults_ms / gpu.prefetch_ms, 2.0, "x",
                                 "the faults were cheap here: a system where the GPU reaches "
                                 "host memory without migrating (pageableMemoryAccess, a "
                                 "coherent link), or the driver prefetched on its own"),
              coherent);
    ctx.claim(
        tutorial::at_least("the prefetch runs within a small factor of the pinned copy rate "
                           "(copy time / prefetch time)",
                           copy_ms / gpu.prefetch_ms, 0.4, "x",
                           "the driver moved the pages in small pieces: is the buffer "
                           "backed by small host pages that are scattered?"));
    std::printf(
        "Back to the CPU, the prefetch brought the pages home %.1f times sooner than a CPU read\n"
        "that faults them in, but the CPU then reads at its own speed: prefetch and read took\n"
        "%.0f%% of the faulting read's time. A prefetch home pays when it overlaps other work.\n\n",
        cpu.faults_ms / cpu.prefetch_ms,
        100.0 * (cpu.prefetch_ms + cpu.resident_ms) / cpu.faults_ms);
    ctx.claim(tutorial::at_least("back to the CPU, a prefetch brings the pages home sooner than "
                                 "a CPU read that faults them in (fault read / prefetch)",
                                 cpu.faults_ms / cpu.prefetch_ms, 1.3, "x",
                                 "the CPU's faults were cheap here, or the prefetch back moved "
                                 "the pages in small pieces"),
              coherent);
    // What moved, counted by the driver once the timings are done, so that recording cannot slow
    // them.
    const std::size_t counted = counted_bytes(bytes);
    int counted_wrong = 0;
    {
        tutorial::UmCounters counters;
        const Counted c = count_steps(counters, counted, ctx.device, counted_wrong);
        claim_counted(ctx, counters, c, counted, coherent);
    }
    return ctx.verdict(wrong + counted_wrong == 0,
                       format("all %d sums (GPU and CPU, every run) equal the pattern's sum, "
                              "and the CPU saw the GPU's new data; so did the 4 counted reads",
                              4 * runs + 1));
}

TUTORIAL_SECTION(fault_vs_prefetch, run_fault_vs_prefetch);
