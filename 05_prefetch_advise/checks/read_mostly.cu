// Checks of section read_mostly: the appendix's loop (the CPU writes, prefetches, then kernels
// and the CPU take turns reading) timed without and with ../read_mostly.cu's advice, a CPU write
// that drops the copies, and the same steps counted by the driver.
#include "05_prefetch_advise/read_mostly.cu"

#include "../helpers/counted.hpp"
#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <string>

using tutorial::format;

namespace {

struct LoopTimes {
    double kernel_ms;  // median kernel read of the whole buffer, inner loop
    double cpu_ms;     // median CPU read of the whole buffer, inner loop
    int wrong;
};

// The Unified Memory appendix's loop: the CPU writes in the outer loop, prefetches go to every
// device, and in the inner loop kernels read the data, with the CPU also reading it between
// launches.
LoopTimes read_loop(std::uint32_t* data, std::size_t count, const std::vector<int>& devices,
                    int outer, int inner) {
    std::vector<double> kernel_ms;
    std::vector<double> cpu_ms;
    int wrong = 0;
    for (int o = 0; o < outer; ++o) {
        const std::uint32_t seed = 100 + o;
        write_then_prefetch(data, count, seed, devices);
        const std::uint64_t expected = pattern_sum(count, seed);
        for (int i = 0; i < inner; ++i) {
            const DeviceSum s = timed_device_sum(data, count);
            kernel_ms.push_back(s.ms);
            // Sums of the pattern do not depend on the seed, so they cannot tell this round's
            // data from the last round's: an element-by-element check on each side can.
            const bool gpu_current = mismatches_on_device(data, count, seed) == 0;
            tutorial::HostTimer timer;
            const std::uint64_t host = sum_on_host(data, count);
            cpu_ms.push_back(timer.elapsed_ms());
            const bool cpu_current = mismatches_on_host(data, count, seed) == 0;
            wrong += (s.sum != expected) + (host != expected) + !gpu_current + !cpu_current;
        }
    }
    return {tutorial::median(kernel_ms), tutorial::median(cpu_ms), wrong};
}

// The CPU rewrites the whole read-mostly buffer, twice: the first write must drop the GPU's
// copies, the second finds none. Kernel reads before and after show the copies gone.
struct Write {
    double write_ms, rewrite_ms;  // the CPU's first write, and the same write again
    double before_ms, after_ms;   // a kernel read before the writes, and right after them
};

Write write_after_copies(std::uint32_t* shared, std::size_t count, int& wrong) {
    const double before_ms = timed_device_sum(shared, count).ms;
    tutorial::HostTimer timer;
    fill_on_host(shared, count, 999);
    const double write_ms = timer.elapsed_ms();
    timer.restart();
    fill_on_host(shared, count, 999);  // the same write again: no copies left to drop
    const double rewrite_ms = timer.elapsed_ms();
    const DeviceSum after = timed_device_sum(shared, count);
    wrong += after.sum != pattern_sum(count, 999);
    wrong += mismatches_on_device(shared, count, 999) != 0;  // the new data, not a stale copy
    const DeviceSum again = timed_device_sum(shared, count);
    wrong += again.sum != pattern_sum(count, 999);
    std::printf(
        "\nThen the CPU writes the whole buffer: %.1f ms, and the same write again %.1f ms. The\n"
        "difference is what dropping the GPU's read-only copies cost the first write. They are\n"
        "gone: a kernel read took %.3f ms before the writes, %.3f ms right after them (the pages\n"
        "fault back in and are duplicated again), %.3f ms the time after. The ReadMostly\n"
        "attribute is still %d: the advice stays, only the copies were dropped.\n",
        write_ms, rewrite_ms, before_ms, after.ms, again.ms,
        read_mostly_attribute(shared, count * sizeof *shared));
    return {write_ms, rewrite_ms, before_ms, after.ms};
}

// The appendix's steps once more, on buffers of at most 64 MiB, with the driver's Unified Memory
// counters on: without the advice, then with it and a CPU write in between.
struct Counted {
    tutorial::UmTraffic plain_cpu_read;  // no advice: the CPU reads after the GPU read
    tutorial::UmTraffic copy_cpu_read;   // ReadMostly: the CPU reads after the GPU got its copy
    tutorial::UmTraffic write;           // ReadMostly: the CPU writes again
    tutorial::UmTraffic read_after;      // ReadMostly: a kernel reads after that write
};

Counted count_steps(tutorial::UmCounters& counters, std::size_t bytes, int device, int& wrong) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const std::vector<int> devices = {device};
    CountedSteps steps(counters);
    Counted c;
    std::uint32_t* data = nullptr;
    const auto kernel_reads = [&](std::uint32_t seed) {
        return [&, seed] { wrong += mismatches_on_device(data, count, seed) != 0; };
    };
    const auto cpu_reads = [&](std::uint32_t seed) {
        return [&, seed] { wrong += mismatches_on_host(data, count, seed) != 0; };
    };
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    steps.step("no advice: the CPU writes, prefetch to the GPU",
               [&] { write_then_prefetch(data, count, 7, devices); });
    steps.step("no advice: a kernel reads", kernel_reads(7));
    c.plain_cpu_read = steps.step("no advice: the CPU reads", cpu_reads(7));
    CUDA_CHECK(cudaFree(data));
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    advise_read_mostly(data, bytes, device);
    steps.step("ReadMostly: the CPU writes, prefetch to the GPU",
               [&] { write_then_prefetch(data, count, 8, devices); });
    steps.step("ReadMostly: a kernel reads", kernel_reads(8));
    c.copy_cpu_read = steps.step("ReadMostly: the CPU reads", cpu_reads(8));
    c.write = steps.step("ReadMostly: the CPU writes again", [&] { fill_on_host(data, count, 9); });
    c.read_after = steps.step("ReadMostly: a kernel reads", kernel_reads(9));
    steps.step("ReadMostly: the CPU reads", cpu_reads(9));
    CUDA_CHECK(cudaFree(data));
    steps.print("What the driver moved in each step, " + tutorial::format_bytes(bytes) +
                " (its Unified Memory counters):");
    return c;
}

// The counted claims: copies made and dropped, where the counters can be read.
void claim_counted(tutorial::Context& ctx, const tutorial::UmCounters& counters, const Counted& c,
                   std::size_t bytes, const std::string& coherent) {
    std::printf(
        "\nWithout the advice the CPU's read takes back the pages the GPU took. With it, the GPU\n"
        "gets a copy and the CPU keeps its own: its read moves nothing. A write moves nothing\n"
        "either, but drops the GPU's copy, so the next kernel read copies the pages over "
        "again.\n\n");
    ctx.claim(tutorial::counted_at_least(
                  "without the advice, the CPU's read takes the pages back from the GPU (MiB "
                  "device to host, % of the buffer)",
                  percent_of(c.plain_cpu_read.dtoh.total, bytes), 90.0, "%",
                  "the CPU read the pages where they were"),
              why_not_counted(counters, {&c.plain_cpu_read}, coherent));
    ctx.claim(tutorial::counted_at_most(
                  "with ReadMostly the GPU got a copy and the CPU kept its pages: its read moves "
                  "nothing (MiB device to host)",
                  mib_of(c.copy_cpu_read.dtoh.total), 2.0, " MiB",
                  "the prefetch moved the pages instead of copying them: was the advice given "
                  "to this range?"),
              why_not_counted(counters, {&c.copy_cpu_read}, coherent));
    ctx.claim(tutorial::counted_at_most(
                  "a CPU write to read-mostly pages moves nothing: it drops the GPU's copy (MiB "
                  "either way)",
                  mib_of(c.write.htod.total + c.write.dtoh.total), 2.0, " MiB",
                  "the CPU had no copy of its own left, and the write fetched the pages"),
              why_not_counted(counters, {&c.write}, coherent));
    ctx.claim(tutorial::counted_at_least(
                  "...so the next kernel read copies the pages over again (MiB host to device, % "
                  "of the buffer)",
                  percent_of(c.read_after.htod.total, bytes), 90.0, "%",
                  "the GPU's copy survived the write: the kernel read stale data?"),
              why_not_counted(counters, {&c.read_after}, coherent));
}

// What moved, counted by the driver once the timings are done, so that recording cannot slow
// them.
void count_and_claim(tutorial::Context& ctx, std::size_t bytes, const std::string& coherent,
                     int& wrong) {
    tutorial::UmCounters counters;
    const std::size_t counted = counted_bytes(bytes);
    const Counted c = count_steps(counters, counted, ctx.device, wrong);
    claim_counted(ctx, counters, c, counted, coherent);
}

}  // namespace

tutorial::Result run_read_mostly(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (8 << 20) : (64 << 20));
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const int outer = ctx.quick() ? 2 : 3;
    const int inner = ctx.iters_or(ctx.quick() ? 3 : 10);
    // Every device that should get a copy; one here, and the loop is written for any number.
    const std::vector<int> devices = {ctx.device};
    std::printf(
        "%s of managed memory. %d times: the CPU writes it, it is prefetched to the GPU, then\n"
        "%d times a kernel reads all of it and the CPU reads all of it. Medians of the reads:\n\n",
        tutorial::format_bytes(bytes).c_str(), outer, inner);

    const auto right = tutorial::Align::right;
    tutorial::Table table({{"advice"},
                           {"kernel read ms", right},
                           {"CPU read ms", right},
                           {"kernel GB/s", right},
                           {"ReadMostly attribute", right}});
    int wrong = 0;
    std::uint32_t* plain = nullptr;
    CUDA_CHECK(cudaMallocManaged(&plain, bytes));
    const LoopTimes without = read_loop(plain, count, devices, outer, inner);
    const int attribute_without = read_mostly_attribute(plain, bytes);
    wrong += without.wrong;
    table.add_row({"none", format("%.3f", without.kernel_ms), format("%.3f", without.cpu_ms),
                   format("%.1f", tutorial::gb_per_s(bytes, without.kernel_ms)),
                   format("%d", attribute_without)});
    CUDA_CHECK(cudaFree(plain));

    std::uint32_t* shared = nullptr;
    CUDA_CHECK(cudaMallocManaged(&shared, bytes));
    // The location is ignored for ReadMostly: the advice is about the range, not a device.
    advise_read_mostly(shared, bytes, ctx.device);
    const LoopTimes with = read_loop(shared, count, devices, outer, inner);
    const int attribute_with = read_mostly_attribute(shared, bytes);
    wrong += with.wrong;
    table.add_row(
        {"cudaMemAdviseSetReadMostly", format("%.3f", with.kernel_ms), format("%.3f", with.cpu_ms),
         format("%.1f", tutorial::gb_per_s(bytes, with.kernel_ms)), format("%d", attribute_with)});
    table.print();

    const Write w = write_after_copies(shared, count, wrong);
    CUDA_CHECK(cudaFree(shared));
    std::printf(
        "\nWithout the advice every kernel has to fault the pages over from the CPU and every\n"
        "CPU read faults them back: each side takes the data away from the other.\n\n");
    const std::string coherent = tutorial::why_hardware_coherent(ctx.device);  // pages may stay
    ctx.claim(tutorial::documented(
        "cudaMemRangeGetAttribute reports ReadMostly exactly where the advice was given",
        attribute_with == 1 && attribute_without == 0,
        format("%d with the advice, %d without", attribute_with, attribute_without),
        "the advice was not recorded for the range",
        "Runtime API reference: cudaMemRangeGetAttribute"));
    ctx.claim(tutorial::at_least("with the advice, the kernel's repeated reads are much faster "
                                 "(kernel time without / with)",
                                 without.kernel_ms / with.kernel_ms, 3.0, "x",
                                 "the pages did not migrate back and forth without the advice: "
                                 "a system where the CPU reads GPU memory in place"),
              coherent);
    ctx.claim(
        tutorial::at_least(
            "a CPU write to read-mostly pages pays to drop the GPU's copies (first write / the "
            "same "
            "write again)",
            w.write_ms / w.rewrite_ms, 2.0, "x",
            "the write did not have to invalidate anything: the copies were already gone, or never "
            "made"),
        coherent);
    count_and_claim(ctx, bytes, coherent, wrong);
    return ctx.verdict(wrong == 0,
                       "every kernel and CPU read returned the data last written, with and "
                       "without the advice, in the timed and the counted steps");
}

TUTORIAL_SECTION(read_mostly, run_read_mostly);
