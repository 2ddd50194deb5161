// Checks of section accessed_by: ../accessed_by.cu's write, CPU read and append timed without
// and with the hint for the host (a kernel writes ret, its pages created in GPU memory; the CPU
// reads it; a kernel appends), the claims branching on directManagedMemAccessFromHost; then the
// same steps, and the GPU side of the advice, counted by the driver.
#include "05_prefetch_advise/accessed_by.cu"

#include "../helpers/counted.hpp"
#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

using tutorial::format;

namespace {

__global__ void count_wrong(const int* ret, int a, int b, int n, unsigned long long* wrong) {
    unsigned long long local = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        local += ret[i] != 2 * (a + b + i);
    }
    if (local != 0) atomicAdd(wrong, local);
}

struct Times {
    double write_ms;
    double read_ms;
    double append_ms;
    unsigned long long wrong;
    bool host_listed;  // cudaMemRangeAttributeAccessedBy names the host
};

Times write_read_append(int n, bool hint) {
    int* ret = allocate_ret(n, hint);
    tutorial::EventTimer timer;
    Times t{};
    t.host_listed = host_in_accessed_by(ret, n * sizeof(int));
    timer.start();
    write_ret(ret, n);  // pages are created in GPU memory
    timer.stop();
    t.write_ms = timer.elapsed_ms();
    tutorial::HostTimer host_timer;
    t.wrong += read_ret_on_cpu(ret, n);
    t.read_ms = host_timer.elapsed_ms();
    timer.start();
    append_ret(ret, n);
    timer.stop();
    t.append_ms = timer.elapsed_ms();
    unsigned long long* wrong = nullptr;
    CUDA_CHECK(cudaMalloc(&wrong, sizeof *wrong));
    CUDA_CHECK(cudaMemset(wrong, 0, sizeof *wrong));
    count_wrong<<<1024, 256>>>(ret, a, b, n, wrong);
    CUDA_CHECK_LAUNCH();
    unsigned long long after_append = 0;
    CUDA_CHECK(cudaMemcpy(&after_append, wrong, sizeof after_append, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(wrong));
    CUDA_CHECK(cudaFree(ret));
    t.wrong += after_append;
    return t;
}

// The narration and the claims, from the medians ([hint][write, read, append]) and whether the
// AccessedBy attribute named the host ([hint]).
void report(tutorial::Context& ctx, const double (&medians)[2][3], const bool (&listed)[2],
            int direct) {
    const auto change = [&](int step) {
        return format("%+.0f%%", 100.0 * (medians[1][step] / medians[0][step] - 1.0));
    };
    std::printf(
        "\nWith the hint: write %s, CPU read %s, append %s. AccessedBy asks the driver to keep\n"
        "the pages mapped for the CPU wherever they live, where a mapping can be made.\n%s\n",
        change(0).c_str(), change(1).c_str(), change(2).c_str(),
        direct
            ? "Here directManagedMemAccessFromHost = 1: the CPU can map GPU memory, so by the\n"
              "Programming Guide (N.1.7) its reads leave the pages on the GPU, and the append\n"
              "finds them there without faults."
            : "Here directManagedMemAccessFromHost = 0: the CPU cannot map GPU memory, so by the\n"
              "Programming Guide (N.1.7) its reads fault and migrate the pages to the host, and\n"
              "the append faults them back: the hint cannot remove a migration on this system.");
    std::printf("\n");
    ctx.claim(tutorial::observed(
        "cudaMemRangeGetAttribute(AccessedBy) lists the host, as cudaCpuDeviceId (-1), exactly "
        "where the hint was given",
        listed[1] && !listed[0],
        format("with the hint: %s; without: %s", listed[1] ? "host listed" : "host NOT listed",
               listed[0] ? "host listed" : "nothing"),
        "the cudaMemRangeGetAttribute entry says AccessedBy returns a list of device ids, and "
        "does not say how the host appears in it"));
    const double append_gain = medians[0][2] / medians[1][2];  // without / with
    if (direct) {
        ctx.claim(tutorial::at_least(
            "with direct host access the hint makes the append faster (append without / with)",
            append_gain, 1.2, "x", "the CPU's reads migrated the pages to the host after all"));
    } else {
        ctx.claim(tutorial::at_most(
            "without direct host access the hint does not make the append several times cheaper, "
            "as it would if the pages had stayed on the GPU (append without / with)",
            append_gain, 3.0, "x",
            "the hint kept the pages on the GPU after all: does the CPU reach GPU memory in "
            "place here (a coherent link)?"));
    }
}

// The appendix's steps once more, on buffers of at most 64 MiB, with the driver's Unified Memory
// counters on, without and with the hint for the host; then the GPU side of the advice.
struct Counted {
    tutorial::UmTraffic cpu_read, append;  // with AccessedBy(host)
    tutorial::UmTraffic plain_gpu_read;    // no advice: a kernel reads CPU-written pages
    tutorial::UmTraffic mapped_reads[2];   // AccessedBy(GPU): a kernel reads them, twice
};

void count_host_side(CountedSteps& steps, Counted& c, int n, unsigned long long& wrong) {
    for (const bool hint : {false, true}) {
        const std::string name = hint ? "AccessedBy(host): " : "no advice: ";
        int* ret = allocate_ret(n, hint);
        steps.step(name + "write<<<...>>>", [&] { write_ret(ret, n); });
        const tutorial::UmTraffic read = steps.step(name + "the CPU reads every value",
                                                    [&] { wrong += read_ret_on_cpu(ret, n); });
        const tutorial::UmTraffic appended =
            steps.step(name + "append<<<...>>>", [&] { append_ret(ret, n); });
        if (hint) {
            c.cpu_read = read;
            c.append = appended;
        }
        CUDA_CHECK(cudaFree(ret));
    }
}

void count_gpu_side(CountedSteps& steps, Counted& c, std::size_t bytes, int device,
                    unsigned long long& wrong) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const std::uint32_t seed = 13;
    std::uint32_t* data = nullptr;
    const auto kernel_reads = [&] {
        wrong += sum_on_device(data, count) != pattern_sum(count, seed);
    };
    for (const bool advise : {false, true}) {
        CUDA_CHECK(cudaMallocManaged(&data, bytes));
        fill_on_host(data, count, seed);  // the pages are made in host memory
        if (advise) {
            steps.step("cudaMemAdvise AccessedBy(GPU), CPU-written pages",
                       [&] { map_for_gpu(data, bytes, device); });
            c.mapped_reads[0] = steps.step("AccessedBy(GPU): a kernel reads", kernel_reads);
            c.mapped_reads[1] = steps.step("AccessedBy(GPU): the kernel again", kernel_reads);
        } else {
            c.plain_gpu_read =
                steps.step("no advice, CPU-written pages: a kernel reads", kernel_reads);
        }
        CUDA_CHECK(cudaFree(data));
    }
}

// The counted claims: what the CPU's read and the append moved with the hint for the host (each
// way of directManagedMemAccessFromHost), and what a mapped GPU's reads moved.
void claim_counted(tutorial::Context& ctx, const tutorial::UmCounters& counters, const Counted& c,
                   std::size_t bytes, int direct, const std::string& coherent) {
    if (direct) {
        ctx.claim(tutorial::counted_at_most(
                      "with direct host access and the hint, the CPU reads the pages in place: at "
                      "most a tenth of them moves (MiB device to host, % of the buffer)",
                      percent_of(c.cpu_read.dtoh.total, bytes), 10.0, "%",
                      "the CPU's reads migrated the pages to the host after all"),
                  why_not_counted(counters, {&c.cpu_read}));
        ctx.claim(
            tutorial::counted_at_most(
                "...and the append finds them on the GPU: at most a tenth moves (MiB host to "
                "device, % of the buffer)",
                percent_of(c.append.htod.total, bytes), 10.0, "%", "the pages had left the GPU"),
            why_not_counted(counters, {&c.append}));
    } else {
        ctx.claim(tutorial::counted_at_least(
                      "without direct host access, the hint or not, the CPU's read migrates the "
                      "pages to the host (with the hint: MiB device to host, % of the buffer)",
                      percent_of(c.cpu_read.dtoh.total, bytes), 90.0, "%",
                      "the CPU read GPU memory in place after all (a coherent link?)"),
                  why_not_counted(counters, {&c.cpu_read}, coherent));
        ctx.claim(tutorial::counted_at_least(
                      "...and the append pulls them back to the GPU (MiB host to device, % of the "
                      "buffer)",
                      percent_of(c.append.htod.total, bytes), 90.0, "%",
                      "the pages were still on the GPU: the CPU read them in place"),
                  why_not_counted(counters, {&c.append}, coherent));
    }
    ctx.claim(tutorial::counted_at_least(
                  "without advice, a kernel's read migrates CPU-written pages to the GPU (MiB "
                  "host to device, % of the buffer)",
                  percent_of(c.plain_gpu_read.htod.total, bytes), 90.0, "%",
                  "the GPU read the pages where they were"),
              why_not_counted(counters, {&c.plain_gpu_read}, coherent));
    ctx.claim(tutorial::counted_at_most(
                  "with AccessedBy(GPU), two kernel reads leave the pages on the host: at most a "
                  "tenth of them moves (MiB host to device, % of the buffer)",
                  percent_of(c.mapped_reads[0].htod.total + c.mapped_reads[1].htod.total, bytes),
                  10.0, "%",
                  "the GPU's accesses migrated the pages instead of reading them "
                  "through the advice's mapping"),
              why_not_counted(counters, {&c.mapped_reads[0], &c.mapped_reads[1]}));
}

}  // namespace

tutorial::Result run_accessed_by(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    const int direct =
        tutorial::device_attribute(ctx.device, cudaDevAttrDirectManagedMemAccessFromHost);
    const int n = static_cast<int>(ctx.size_or(ctx.quick() ? (16 << 20) : (256 << 20)) / 4);
    const int runs = ctx.iters_or(ctx.quick() ? 2 : 5);
    std::printf(
        "The appendix's sequence on %s of managed ints: a kernel writes ret[i] = a + b + i, the\n"
        "CPU reads every value, a kernel appends a + b + i. directManagedMemAccessFromHost = %d.\n"
        "Median of %d runs, each on a fresh allocation.\n\n",
        tutorial::format_bytes(static_cast<std::size_t>(n) * 4).c_str(), direct, runs);
    tutorial::Table table({{"hint"},
                           {"write ms", tutorial::Align::right},
                           {"CPU read ms", tutorial::Align::right},
                           {"append ms", tutorial::Align::right}});
    unsigned long long wrong = 0;
    double medians[2][3] = {};  // [hint][write, read, append]
    bool listed[2] = {};        // [hint]: the AccessedBy attribute named the host
    for (const bool hint : {false, true}) {
        std::vector<double> w, r, a;
        for (int run = 0; run < runs; ++run) {
            const Times t = write_read_append(n, hint);
            w.push_back(t.write_ms);
            r.push_back(t.read_ms);
            a.push_back(t.append_ms);
            wrong += t.wrong;
            listed[hint] = t.host_listed;
        }
        medians[hint][0] = tutorial::median(w);
        medians[hint][1] = tutorial::median(r);
        medians[hint][2] = tutorial::median(a);
        table.add_row({hint ? "cudaMemAdviseSetAccessedBy(host)" : "none",
                       format("%.2f", tutorial::median(w)), format("%.2f", tutorial::median(r)),
                       format("%.2f", tutorial::median(a))});
    }
    table.print();
    report(ctx, medians, listed, direct);
    // What moved, counted by the driver once the timings are done, so that recording cannot slow
    // them.
    {
        tutorial::UmCounters counters;
        const std::size_t counted = counted_bytes(static_cast<std::size_t>(n) * sizeof(int));
        CountedSteps steps(counters);
        Counted c;
        count_host_side(steps, c, static_cast<int>(counted / sizeof(int)), wrong);
        count_gpu_side(steps, c, counted, ctx.device, wrong);
        steps.print("What the driver moved in each step, " + tutorial::format_bytes(counted) +
                    " (its Unified Memory counters):");
        std::printf(
            "\nThe CPU's read of GPU-written pages, and the append after it, with and without the\n"
            "hint for the host; then a GPU with AccessedBy reading CPU-written pages over the\n"
            "link, against a kernel that faults them over.\n\n");
        claim_counted(ctx, counters, c, counted, direct,
                      tutorial::why_hardware_coherent(ctx.device));
    }
    return ctx.verdict(wrong == 0,
                       format("every value read by the CPU after write, and by a kernel after "
                              "append, was right (%d runs each way, and the counted steps)",
                              runs));
}

TUTORIAL_SECTION(accessed_by, run_accessed_by);
