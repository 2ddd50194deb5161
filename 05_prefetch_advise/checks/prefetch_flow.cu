// Checks of section prefetch_flow: ../prefetch_flow.cu's foo(stream) run with and without its
// prefetches (timed from the first GPU step to the last CPU read), what it saw while the
// prefetches were queued, and every value the CPU used.
#include "05_prefetch_advise/prefetch_flow.cu"

#include "../helpers/managed.hpp"
#include "common/busy.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <string>

namespace {

std::string location_name(int location) {
    if (location == cudaCpuDeviceId) return "the host (-1)";
    if (location == cudaInvalidDeviceId) return "none (-2)";
    return "GPU " + std::to_string(location);
}

// One run: foo with or without the prefetches, its init_data the CPU writing every value, its
// use_data the CPU reading every value (a sum). Returns the milliseconds from foo's first GPU
// step to the last CPU read; counts wrong values into `wrong`. A narrated run holds the stream
// for 50 ms first, so that both prefetches are certainly still queued when foo looks at the
// attribute.
double run_once(cudaStream_t s, int device, std::size_t count, bool with_prefetches, Seen* narrate,
                std::size_t& wrong) {
    tutorial::HostTimer timer;
    double ms = 0.0;
    const auto init_data = [&](std::uint32_t* data, std::size_t n) {
        fill_on_host(data, n, 9);  // execute on the CPU
        if (narrate != nullptr) {
            tutorial::load_kernel(mykernel);  // or its first launch may wait for the busy kernel
            tutorial::launch_busy(s, 50.0);
        }
        timer.restart();
    };
    const auto use_data = [&](const std::uint32_t* data, std::size_t n) {
        std::uint64_t sum = 0;  // the CPU reads every value
        for (std::size_t i = 0; i < n; ++i) sum += data[i];
        ms = timer.elapsed_ms();
        // Checked after the timer stopped: working out the expected values costs more than
        // reading them, and would hide much of the difference the prefetches make.
        std::uint64_t expected_sum = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint32_t expected = pattern(i, 9) * 2 + 1;
            wrong += data[i] != expected;
            expected_sum += expected;
        }
        wrong += sum != expected_sum;  // the values the timed read saw
    };
    if (with_prefetches) {
        const Seen seen = foo(s, device, count, init_data, use_data);
        if (narrate != nullptr) *narrate = seen;
    } else {
        foo_without_prefetches(s, count, init_data, use_data);
    }
    return ms;
}

}  // namespace

tutorial::Result run_prefetch_flow(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    const std::size_t count = ctx.size_or(ctx.quick() ? (32 << 20) : (256 << 20)) / 4;
    // A median of 5, quick mode too: of 20 quick runs with a median of 2, one measured the
    // prefetches slower (0.58x), and a single slow run cannot sway a median of 5.
    const int runs = ctx.iters_or(5);
    cudaStream_t s = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::printf(
        "foo(stream) on %s: init on the CPU, prefetch to the GPU, kernel, prefetch to\n"
        "the CPU, cudaStreamSynchronize, use on the CPU:\n",
        tutorial::format_bytes(count * 4).c_str());
    std::size_t wrong = 0;
    Seen seen;
    run_once(s, ctx.device, count, true, &seen, wrong);
    std::printf(
        "  with the stream held for 50 ms first, so that nothing queued has run yet:\n"
        "  last prefetch location after the first prefetch: %s\n"
        "  after the kernel and the prefetch back: %s, while cudaStreamQuery says %s\n",
        location_name(seen.after_first).c_str(), location_name(seen.after_second).c_str(),
        cudaGetErrorName(seen.stream_after_second));
    const double with_ms = tutorial::median_ms(
        1, runs, [&] { return run_once(s, ctx.device, count, true, nullptr, wrong); });
    const double without_ms = tutorial::median_ms(
        1, runs, [&] { return run_once(s, ctx.device, count, false, nullptr, wrong); });
    CUDA_CHECK(cudaStreamDestroy(s));

    std::printf("\n");
    tutorial::Table table({{"foo(stream), from the first prefetch to the last CPU read"},
                           {"ms", tutorial::Align::right}});
    table.add_row({"with the two prefetches", tutorial::format("%.1f", with_ms)});
    table.add_row({"without them (page faults both ways)", tutorial::format("%.1f", without_ms)});
    table.print();
    std::printf(
        "\nA prefetch is an operation in the stream, like a kernel: the one to the GPU runs\n"
        "before the kernel starts, the one back to the host after the kernel ends, and\n"
        "cudaStreamSynchronize waits for all three (the Programming Guide, N.3.1). As its entry\n"
        "says, cudaMemRangeGetAttribute reports where the last prefetch was asked to go, not\n"
        "whether it has happened.\n\n");
    // The cudaMemRangeGetAttribute entry: LastPrefetchLocation is the last location the program
    // asked for, with no indication of whether that prefetch has run or even begun. The
    // cudaMemPrefetchAsync entry calls the prefetch asynchronous to the host, yet driver 580 was
    // seen doing part of a migration inside the call; where the stream had nothing left pending,
    // the "before it has run" part cannot be judged.
    ctx.claim(
        tutorial::documented(
            "the range attribute names a prefetch's destination as soon as it is queued, "
            "before it has run",
            seen.after_first == ctx.device && seen.after_second == cudaCpuDeviceId,
            "after the first: " + location_name(seen.after_first) +
                "; after the second, queued behind the kernel: " + location_name(seen.after_second),
            "the driver recorded the location only once the migration was done",
            "Runtime API reference: cudaMemRangeGetAttribute"),
        seen.stream_after_second == cudaErrorNotReady
            ? ""
            : tutorial::format("the prefetch call returned only after the stream had run "
                               "it (observed on %s), so nothing was pending",
                               tutorial::this_driver().c_str()));
    ctx.claim(tutorial::at_least("foo with the two prefetches beats page faults both ways",
                                 without_ms / with_ms, 1.1, "x",
                                 "the faults were cheap here: little data, or pages already "
                                 "where the kernel ran"));
    // Stream order (the Guide): a prefetch starts after the work queued before it and the work
    // queued after it waits for it; cudaStreamSynchronize waits for all of it.
    ctx.claim(tutorial::documented(
        "every value the CPU used after cudaStreamSynchronize is the kernel's", wrong == 0,
        tutorial::format("%zu wrong in %d runs", wrong, 2 * runs + 3),
        "the stream did not order the prefetch back after the kernel",
        "Programming Guide, N.3.1 Data Prefetching"));
    return ctx.verdict(wrong == 0,
                       tutorial::format("every value the CPU used equals 2 * initial + 1, in all "
                                        "%d runs of foo with and without prefetches",
                                        2 * runs + 3));
}

TUTORIAL_SECTION(prefetch_flow, run_prefetch_flow);
