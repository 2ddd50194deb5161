// Checks of section first_touch: runs ../first_touch.cu's steps and prints free device memory
// after each, repeats the two first touches on 64 MiB buffers with the driver's Unified Memory
// counters running, and judges both.
#include "03_managed/first_touch.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/um_counters.hpp"

#include <cstdio>
#include <string>

namespace {

// The steps the Unified Memory counters measure, on buffers of their own: 64 MiB, whatever --size
// says, since the counters lose records silently when one step moves far more (um_counters.hpp).
constexpr std::size_t counted_bytes = std::size_t{64} << 20;

struct CountedSteps {
    tutorial::UmTraffic gpu_first;  // a kernel touches a fresh buffer
    tutorial::UmTraffic cpu_first;  // the CPU writes another fresh buffer
    tutorial::UmTraffic gpu_after;  // then a kernel touches that one
};

// The lesson's two first touches again, counted, and a kernel after the CPU's.
CountedSteps count_first_touches(tutorial::UmCounters& counters) {
    std::uint8_t* gpu_touched = nullptr;
    std::uint8_t* cpu_touched = nullptr;
    CUDA_CHECK(cudaMallocManaged(&gpu_touched, counted_bytes));
    CUDA_CHECK(cudaMallocManaged(&cpu_touched, counted_bytes));
    CountedSteps s;
    s.gpu_first = counters.measure([&] {
        touch<<<256, 256>>>(gpu_touched, counted_bytes);
        CUDA_CHECK_LAUNCH();
    });
    s.cpu_first = counters.measure([&] { std::memset(cpu_touched, 1, counted_bytes); });
    s.gpu_after = counters.measure([&] {
        touch<<<256, 256>>>(cpu_touched, counted_bytes);
        CUDA_CHECK_LAUNCH();
    });
    CUDA_CHECK(cudaFree(cpu_touched));
    CUDA_CHECK(cudaFree(gpu_touched));
    return s;
}

double in_mib(std::uint64_t bytes) {
    return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

// What moved at each first touch, as the driver's counters report it, and the claims on it.
void count_and_judge(tutorial::Context& ctx, const std::string& paging) {
    tutorial::UmCounters counters;
    const CountedSteps s = count_first_touches(counters);
    std::printf(
        "\nWhat moved at each first touch, counted by the driver (Unified Memory counters,\n"
        "CUPTI), on two fresh %s buffers:\n\n",
        tutorial::format_bytes(counted_bytes).c_str());
    std::printf("%s\n", counters.control_line().c_str());
    tutorial::Table table(tutorial::um_columns("step"));
    table.add_row(tutorial::um_cells("a kernel touches a fresh buffer first", s.gpu_first));
    table.add_row(tutorial::um_cells("the CPU writes another fresh buffer first", s.cpu_first));
    table.add_row(tutorial::um_cells("then a kernel touches that buffer", s.gpu_after));
    table.print();
    std::printf(
        "\nWhat to look for: a kernel's first touch of a fresh buffer moves nothing (its pages\n"
        "are made in device memory); the CPU's first writes fault and move nothing either; a\n"
        "kernel touching the pages the CPU wrote faults, and the whole buffer moves to the GPU.\n"
        "Counted on this driver, so the claims below are judged from these counts.\n\n");
    const double buffer_mib = in_mib(counted_bytes);
    ctx.claim(tutorial::counted_at_most(
                  "kernel_first_touch_moves_nothing",
                  "a kernel's first touch of a fresh managed buffer moves nothing from the host: "
                  "MiB host to device",
                  in_mib(s.gpu_first.htod.total), 1.0, " MiB",
                  "the buffer's pages were in host memory when the kernel touched it: the CPU "
                  "wrote it first"),
              tutorial::why_not_counted(counters, {&s.gpu_first}, paging));
    ctx.claim(tutorial::counted_at_most(
                  "cpu_first_touch_moves_nothing",
                  "the CPU's first writes to a fresh managed buffer move nothing from the "
                  "device: MiB device to host",
                  in_mib(s.cpu_first.dtoh.total), 1.0, " MiB",
                  "the buffer's pages were in device memory when the CPU wrote it: a kernel "
                  "touched it first"),
              tutorial::why_not_counted(counters, {&s.cpu_first}, paging));
    ctx.claim(tutorial::counted_at_least(
                  "kernel_pulls_cpu_pages",
                  "a kernel touching managed pages the CPU wrote first pulls them to the GPU: MiB "
                  "host to device, as a share of the buffer",
                  100.0 * in_mib(s.gpu_after.htod.total) / buffer_mib, 90.0, "%",
                  "the pages were in device memory before the kernel ran (prefetched, or first "
                  "touched by a kernel), or the GPU read them in host memory where they were"),
              tutorial::why_not_counted(counters, {&s.gpu_after}, paging));
    ctx.claim(tutorial::counted_at_least(
                  "kernel_pulls_by_faults",
                  "a kernel touching managed pages the CPU wrote first takes GPU page faults",
                  static_cast<double>(s.gpu_after.gpu_page_faults), 1.0, " faults",
                  "the pages were moved to the GPU before the kernel ran (a prefetch), so it "
                  "never faulted"),
              tutorial::why_not_counted(counters, {&s.gpu_after}, paging));
}

}  // namespace

// The default size: at most a quarter of the free memory, so that the driver's own use cannot
// blur the steps on a small GPU.
static std::size_t default_size(bool quick) {
    const std::size_t wanted = quick ? (std::size_t{256} << 20) : (std::size_t{1} << 30);
    return tutorial::fit_in_free_memory(wanted, 0.25, std::size_t{64} << 20);
}

tutorial::Result run_first_touch(tutorial::Context& ctx) {
    const std::size_t bytes = ctx.size_or(default_size(ctx.quick()));
    if (bytes > tutorial::free_device_memory() / 4) {
        return ctx.skip("--size " + tutorial::format_bytes(bytes) +
                        " is more than a quarter of the free device memory");
    }
    std::printf("Free device memory (cudaMemGetInfo) around allocations of %s:\n\n",
                tutorial::format_bytes(bytes).c_str());
    tutorial::Table table({{"step"},
                           {"free device memory", tutorial::Align::right},
                           {"used by this step", tutorial::Align::right}});
    const auto used = [](double bytes_used) {
        return bytes_used >= 0
                   ? tutorial::format_bytes(static_cast<std::size_t>(bytes_used))
                   : "-" + tutorial::format_bytes(static_cast<std::size_t>(-bytes_used));
    };
    // "Nothing" and "all of it", with room for the driver's own bookkeeping and rounding.
    const double size = static_cast<double>(bytes);
    const auto nothing = [&](double used) { return used < size / 8; };
    const auto all = [&](double used) { return used > size * 7 / 8; };
    const auto taken = [](std::size_t before, std::size_t after) {
        return static_cast<double>(before) - static_cast<double>(after);
    };
    // cudaMemGetInfo counts the whole device, so another process allocating at the same moment
    // shows in a step: a run whose steps differ from what this driver did before is made again,
    // with fresh buffers (three runs at most), before the claims read it.
    const auto as_before = [&](const FreeMemory& m) {
        return nothing(taken(m.start, m.managed)) && all(taken(m.managed, m.gpu_touch)) &&
               nothing(taken(m.gpu_touch, m.managed_2)) &&
               nothing(taken(m.managed_2, m.cpu_touch)) && all(taken(m.cpu_touch, m.cuda_malloc));
    };
    FreeMemory f = first_touch(bytes);
    int runs = 1;
    for (; runs < 3 && !as_before(f); ++runs) f = first_touch(bytes);
    if (runs > 1) std::printf("(%d runs: the last one is shown)\n", runs);
    std::size_t before = f.start;
    const auto step = [&](const char* what, std::size_t now) {
        const double taken = static_cast<double>(before) - static_cast<double>(now);
        table.add_row({what, tutorial::format_bytes(now), used(taken)});
        before = now;
        return taken;
    };
    step("start", f.start);
    const double on_alloc = step("cudaMallocManaged", f.managed);
    const double on_gpu_touch = step("a kernel touches every page", f.gpu_touch);
    const double on_alloc_2 = step("cudaMallocManaged (a second buffer)", f.managed_2);
    const double on_cpu_touch = step("the CPU touches every page of it", f.cpu_touch);
    const double on_cuda_malloc = step("cudaMalloc, for comparison", f.cuda_malloc);
    step("all three freed", f.freed);
    table.print();

    std::printf(
        "\nThe managed allocation itself took no device memory; the kernel's first touch did,\n"
        "page by page as it faulted them in. Pages first touched by the CPU live in host\n"
        "memory and cost the GPU nothing until a kernel uses them. cudaMalloc takes its memory\n"
        "at once. The Guide (N.2.1.1) says only that managed memory is populated at first\n"
        "touch, on the CPU or the GPU: which one, and what cudaMemGetInfo then shows, is what\n"
        "this driver did. This is also what lets managed allocations exceed the GPU's memory\n"
        "(oversubscription): pages are evicted to the host when the GPU runs out. This course\n"
        "never asks for more managed memory than the GPU has free; the README says why.\n\n");
    const std::string paging = tutorial::why_pages_need_not_migrate(ctx.device);
    // N.2.1.1 says such devices allocate no physical memory at the call, in the sentence that
    // says the memory may (可能) then reside on the CPU or the GPU; the cudaMallocManaged entry
    // says it may not be populated when the call returns: observed, never a FAIL.
    ctx.claim(tutorial::observed(
                  "no_memory_at_the_call", "cudaMallocManaged takes no device memory at the call",
                  nothing(on_alloc) && nothing(on_alloc_2),
                  used(on_alloc) + " at the first, " + used(on_alloc_2) + " at the second",
                  "the cudaMallocManaged entry says the memory may not be populated when the "
                  "call returns, and N.2.1.1's sentence on it says the pages may reside on the "
                  "CPU or the GPU"),
              tutorial::why_no_on_demand_paging(ctx.device));
    ctx.claim(tutorial::observed(
                  "kernel_touch_takes_memory", "a kernel's first touch puts managed pages in device memory", all(on_gpu_touch),
                  used(on_gpu_touch) + " at the kernel's touch",
                  "the cudaMallocManaged entry says the memory may be populated on access, and "
                  "N.2.1.1 that it may reside on the CPU or the GPU"),
              paging);
    ctx.claim(tutorial::observed("cpu_touch_costs_nothing", "pages the CPU touches first cost the GPU nothing",
                                 nothing(on_cpu_touch), used(on_cpu_touch) + " at the CPU's touch",
                                 "N.2.1.1 says first-touched managed memory may reside on the CPU "
                                 "or the GPU"),
              paging);
    ctx.claim(tutorial::observed("cuda_malloc_takes_all", "cudaMalloc takes all of its device memory at once",
                                 all(on_cuda_malloc), used(on_cuda_malloc) + " at cudaMalloc",
                                 "the cudaMalloc entry says it allocates device memory, not when "
                                 "cudaMemGetInfo's free count falls"));
    count_and_judge(ctx, paging);
    return ctx.verdict(true,
                       tutorial::format("two cudaMallocManaged calls of %s took %s and %s of "
                                        "device memory (cudaMemGetInfo, observed); where pages "
                                        "went is observed and counted",
                                        tutorial::format_bytes(bytes).c_str(),
                                        used(on_alloc).c_str(), used(on_alloc_2).c_str()));
}

TUTORIAL_SECTION(first_touch, run_first_touch);
