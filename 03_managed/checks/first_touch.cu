// Checks of section first_touch: runs ../first_touch.cu's walkthrough at --size and prints the
// free device memory after each step, then runs it once more on 64 MiB buffers with the driver's
// Unified Memory counters on, counting what each touch moved, and judges the counts.
#include "03_managed/first_touch.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/harness/um_counters.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

namespace {

// The counted run's buffers: 64 MiB, whatever --size says, since the counters lose records
// silently when one step moves far more (um_counters.hpp).
constexpr std::size_t counted_bytes = std::size_t{64} << 20;

double in_mib(std::uint64_t bytes) {
    return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

// Device memory each step took (bytes; negative: it gave some back).
struct Taken {
    double alloc, gpu_touch, alloc_2, cpu_touch, gpu_after, cuda_malloc, freed;
};

Taken taken_by(const FreeMemory& f) {
    const auto d = [](std::size_t before, std::size_t after) {
        return static_cast<double>(before) - static_cast<double>(after);
    };
    return {d(f.start, f.managed),           d(f.managed, f.gpu_touch),
            d(f.gpu_touch, f.managed_2),     d(f.managed_2, f.cpu_touch),
            d(f.cpu_touch, f.gpu_after_cpu), d(f.gpu_after_cpu, f.cuda_malloc),
            d(f.cuda_malloc, f.freed)};
}

// "Nothing" and "all of it", with room for the driver's own bookkeeping and rounding.
struct Judge {
    double size;
    bool nothing(double used) const { return used < size / 8; }
    bool all(double used) const { return used > size * 7 / 8; }
};

std::string used(double bytes_used) {
    return bytes_used >= 0 ? tutorial::format_bytes(static_cast<std::size_t>(bytes_used))
                           : "-" + tutorial::format_bytes(static_cast<std::size_t>(-bytes_used));
}

// The walkthrough at `bytes`. cudaMemGetInfo counts the whole device, so another process
// allocating at the same moment shows in a step: a run whose steps differ from what this driver
// did before is made again, with fresh buffers (three runs at most; one under compute-sanitizer,
// which changes what memory is used), before the claims read it.
FreeMemory free_memory_steps(std::size_t bytes) {
    const int most = tutorial::why_timing_not_judged().empty() ? 3 : 1;
    const Judge j{static_cast<double>(bytes)};
    const auto as_before = [&](const Taken& t) {
        return j.nothing(t.alloc) && j.all(t.gpu_touch) && j.nothing(t.alloc_2) &&
               j.nothing(t.cpu_touch) && j.all(t.gpu_after) && j.all(t.cuda_malloc);
    };
    FreeMemory f = walkthrough(bytes);
    int runs = 1;
    for (; runs < most && !as_before(taken_by(f)); ++runs) f = walkthrough(bytes);
    if (runs > 1) std::printf("(%d runs of the walkthrough: the last one is shown)\n", runs);
    return f;
}

void print_free_memory(const FreeMemory& f) {
    const Taken t = taken_by(f);
    tutorial::Table table({{"step"},
                           {"free device memory", tutorial::Align::right},
                           {"used by this step", tutorial::Align::right}});
    table.named("free_memory");
    const auto row = [&](const char* what, std::size_t now, double taken) {
        table.add_row({what, tutorial::format_bytes(now), used(taken)});
    };
    row("start", f.start, 0.0);
    row("cudaMallocManaged", f.managed, t.alloc);
    row("a kernel touches every page", f.gpu_touch, t.gpu_touch);
    row("cudaMallocManaged (a second buffer)", f.managed_2, t.alloc_2);
    row("the CPU touches every page of it", f.cpu_touch, t.cpu_touch);
    row("a kernel touches the CPU's pages", f.gpu_after_cpu, t.gpu_after);
    row("cudaMalloc, for comparison", f.cuda_malloc, t.cuda_malloc);
    row("all three freed", f.freed, t.freed);
    table.print();
}

// What the cudaMallocManaged calls took, as N.2.1.1 promises: judged where pages are made on
// demand, and whether they took nothing.
struct AtTheCall {
    bool judged = false, none = false;
};

// What cudaMemGetInfo showed: no memory at the call (documented: the Programming Guide's
// N.2.1.1); where pages go, as observations: the reference leaves that open.
AtTheCall claim_free_memory(tutorial::Context& ctx, const FreeMemory& f, std::size_t bytes,
                       const std::string& paging) {
    const Taken t = taken_by(f);
    const Judge j{static_cast<double>(bytes)};
    // N.2.1.1: devices of compute capability 6.x and later allocate no physical memory at the
    // cudaMallocManaged call (its 可能, in the sentence's next statement, is about where the pages
    // go at first touch: the CPU or the GPU). Judged where pages are made on demand. The promise
    // is the Guide's: the cudaMallocManaged entry says only that the memory may not be populated
    // when the call returns.
    const bool none_at_call = j.nothing(t.alloc) && j.nothing(t.alloc_2);
    const std::string no_paging = tutorial::why_no_on_demand_paging(ctx.device);
    ctx.claim(tutorial::documented(
                  "no_memory_at_the_call", "cudaMallocManaged takes no device memory at the call",
                  none_at_call,
                  used(t.alloc) + " at the first, " + used(t.alloc_2) + " at the second",
                  "the driver allocated physical memory at the call, or another process "
                  "allocated device memory meanwhile (the walkthrough ran up to three "
                  "times, once under compute-sanitizer)",
                  tutorial::Entry{"Programming Guide, N.2.1.1 Explicit Allocation Using "
                                  "cudaMallocManaged()",
                                  "6.x cudaMallocManaged() 物理内存", "不会"}),
              no_paging);
    ctx.claim(tutorial::observed(
                  "kernel_touch_takes_memory",
                  "a kernel's first touch puts managed pages in device memory", j.all(t.gpu_touch),
                  used(t.gpu_touch) + " at the kernel's touch",
                  "the cudaMallocManaged entry says the memory may be populated on access, and "
                  "N.2.1.1 that it may reside on the CPU or the GPU"),
              paging);
    ctx.claim(tutorial::observed("cpu_touch_costs_nothing",
                                 "pages the CPU touches first cost the GPU nothing",
                                 j.nothing(t.cpu_touch), used(t.cpu_touch) + " at the CPU's touch",
                                 "N.2.1.1 says first-touched managed memory may reside on the CPU "
                                 "or the GPU"),
              paging);
    ctx.claim(tutorial::observed("cuda_malloc_takes_all",
                                 "cudaMalloc takes all of its device memory at once",
                                 j.all(t.cuda_malloc), used(t.cuda_malloc) + " at cudaMalloc",
                                 "the cudaMalloc entry says it allocates device memory, not when "
                                 "cudaMemGetInfo's free count falls"));
    return {no_paging.empty(), none_at_call};
}

// What the counted claims came to: how many could be judged and held, and why the others could
// not be judged (the first reason given).
struct Counted {
    int judged = 0, held = 0;
    std::string why_not;

    void claim(tutorial::Context& ctx, const tutorial::Claim& c, const std::string& why) {
        const bool ok = ctx.claim(c, why);
        if (!why.empty()) {
            if (why_not.empty()) why_not = why;
            return;
        }
        ++judged;
        held += ok ? 1 : 0;
    }
};

// The walkthrough again on 64 MiB buffers, counted: what moved at each touch, and the claims.
Counted count_and_judge(tutorial::Context& ctx, const std::string& paging) {
    tutorial::UmCounters counters;
    std::printf(
        "\nThe walkthrough again on %s buffers, with the driver's Unified Memory counters\n"
        "(CUPTI) counting what moved at each touch:\n%s\n\n",
        tutorial::format_bytes(counted_bytes).c_str(), counters.control_line().c_str());
    tutorial::UmTraffic gpu, cpu, after;
    {
        tutorial::StepTraffic traffic(counters);
        walkthrough(counted_bytes);
        gpu = traffic.of(kernel_first);
        cpu = traffic.of(cpu_first);
        after = traffic.of(kernel_after_cpu);
    }
    tutorial::Table table(tutorial::um_columns("step"));
    table.named("counted");
    table.add_row(tutorial::um_cells(kernel_first.name, gpu));
    table.add_row(tutorial::um_cells(cpu_first.name, cpu));
    table.add_row(tutorial::um_cells(kernel_after_cpu.name, after));
    table.print();
    std::printf(
        "\nA fresh buffer's first touch moves nothing on either side: its pages are made where\n"
        "they are touched. Only the kernel touching the CPU's pages moves data, by faults.\n\n");
    const double buffer_mib = in_mib(counted_bytes);
    Counted counted;
    counted.claim(ctx,
                  tutorial::counted_at_most(
                      "kernel_first_touch_moves_nothing",
                      "a kernel's first touch of a fresh managed buffer moves nothing from the "
                      "host: MiB host to device",
                      in_mib(gpu.htod.total), 1.0, " MiB",
                      "the buffer's pages were in host memory when the kernel touched it: the CPU "
                      "wrote it first"),
                  tutorial::why_not_counted(counters, {&gpu}, paging));
    counted.claim(ctx,
                  tutorial::counted_at_most(
                      "cpu_first_touch_moves_nothing",
                      "the CPU's first writes to a fresh managed buffer move nothing from the "
                      "device: MiB device to host",
                      in_mib(cpu.dtoh.total), 1.0, " MiB",
                      "the buffer's pages were in device memory when the CPU wrote it: a kernel "
                      "touched it first"),
                  tutorial::why_not_counted(counters, {&cpu}, paging));
    counted.claim(ctx,
                  tutorial::counted_at_least(
                      "kernel_pulls_cpu_pages",
                      "a kernel touching pages the CPU wrote first pulls them over (MiB host to "
                      "device, % of the buffer)",
                      100.0 * in_mib(after.htod.total) / buffer_mib, 90.0, "%",
                      "the pages were in device memory before the kernel ran (prefetched, or "
                      "first touched by a kernel), or the GPU read them in host memory where "
                      "they were"),
                  tutorial::why_not_counted(counters, {&after}, paging));
    counted.claim(ctx,
                  tutorial::counted_at_least(
                      "kernel_pulls_by_faults",
                      "a kernel touching managed pages the CPU wrote first takes GPU page faults",
                      static_cast<double>(after.gpu_page_faults), 1.0, " faults",
                      "the pages were moved to the GPU before the kernel ran (a prefetch), so it "
                      "never faulted"),
                  tutorial::why_not_counted(counters, {&after}, paging));
    return counted;
}

// The default size: at most a quarter of the free memory, so that the driver's own use cannot
// blur the steps on a small GPU.
std::size_t default_size(bool quick) {
    const std::size_t wanted = quick ? (std::size_t{256} << 20) : (std::size_t{1} << 30);
    return tutorial::fit_in_free_memory(wanted, 0.25, std::size_t{64} << 20);
}

}  // namespace

tutorial::Result run_first_touch(tutorial::Context& ctx) {
    const std::size_t bytes = ctx.size_or(default_size(ctx.quick()));
    // The walkthrough holds up to three buffers of --size in device memory at once.
    if (bytes > tutorial::free_device_memory() / 4) {
        return ctx.skip("--size " + tutorial::format_bytes(bytes) +
                        " is more than a quarter of the free device memory");
    }
    std::printf(
        "The walkthrough on %s buffers: free device memory (cudaMemGetInfo) after each "
        "step:\n\n",
        tutorial::format_bytes(bytes).c_str());
    const FreeMemory f = free_memory_steps(bytes);
    print_free_memory(f);
    std::printf(
        "\nThe managed allocation itself took no device memory; the kernel's first touch did,\n"
        "page by page as it faulted them in. Pages first touched by the CPU live in host\n"
        "memory and cost the GPU nothing until a kernel uses them; then they move over.\n"
        "cudaMalloc takes its memory at once. The Guide (N.2.1.1) says that on devices of\n"
        "compute capability 6.x and later cudaMallocManaged allocates no physical memory, and\n"
        "that the memory is populated at first touch, on the CPU or the GPU: which one, and\n"
        "what cudaMemGetInfo then shows, is what this driver did. This is also what lets managed\n"
        "allocations exceed the GPU's memory (oversubscription): pages are evicted to the host\n"
        "when the GPU runs out. This course never asks for more managed memory than the GPU\n"
        "has free; the README says why.\n\n");
    const std::string paging = tutorial::why_pages_need_not_migrate(ctx.device);
    const AtTheCall call = claim_free_memory(ctx, f, bytes, paging);
    const Counted counted = count_and_judge(ctx, paging);
    // Judged: the allocation at the call (documented in the Guide's N.2.1.1; judged where pages
    // are made on demand) and the counted claims; the other free-memory steps are observations.
    // With neither, the section has judged nothing, and says so.
    if (!call.judged && counted.judged == 0) {
        return ctx.skip("nothing here could be judged: " +
                        tutorial::why_no_on_demand_paging(ctx.device) +
                        "; the counted claims were not judged (" + counted.why_not + ")");
    }
    const Taken t = taken_by(f);
    return ctx.verdict((!call.judged || call.none) && counted.held == counted.judged,
                       tutorial::format("%d of %d counted claims held; two cudaMallocManaged "
                                        "calls of %s took %s and %s of device memory "
                                        "(cudaMemGetInfo; %s)",
                                        counted.held, counted.judged,
                                        tutorial::format_bytes(bytes).c_str(),
                                        used(t.alloc).c_str(), used(t.alloc_2).c_str(),
                                        call.judged ? "N.2.1.1: none at the call"
                                                    : "not judged here"));
}

TUTORIAL_SECTION(first_touch, run_first_touch);
