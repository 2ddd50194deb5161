// Checks of section threads: runs ../threads.cu's walkthrough round after round (each round runs
// one task alone, then 4 threads with a stream each, with cudaStreamPerThread and in the legacy
// NULL stream, so the ways compared are interleaved), times each way's loops and checks every
// thread's data against the CPU's prediction.
#include "04_stream_attach/threads.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"

#include <string>

namespace {

constexpr int threads = 4;

// Medians over `runs` walkthroughs of each way's wall time: from the moment the threads' loops
// start together to the moment the last one ends (host time).
struct Medians {
    double alone_ms, own_ms, per_thread_ms, legacy_ms;
};

Medians time_rounds(int device, int runs, bool legacy_runs, int& wrong) {
    tutorial::StepTimes times;
    for (int r = 0; r < runs; ++r) wrong += walkthrough(device, threads).wrong;
    return {times.median_host_ms(alone), times.median_host_ms(own_streams),
            times.median_host_ms(per_thread), legacy_runs ? times.median_host_ms(legacy) : 0.0};
}

void print_times(const Medians& m, bool legacy_runs) {
    tutorial::Table table({{"streams"},
                           {"wall ms", tutorial::Align::right},
                           {"vs one task alone", tutorial::Align::right}});
    table.named("threads");
    const auto row = [&](const char* what, double ms) {
        table.add_row(
            {what, tutorial::format("%.1f", ms), tutorial::format("%.2fx", ms / m.alone_ms)});
    };
    row("own stream per thread (cudaStreamCreate)", m.own_ms);
    row("cudaStreamPerThread", m.per_thread_ms);
    if (legacy_runs) {
        row("legacy NULL stream, shared by all threads", m.legacy_ms);
    } else {
        // Globally visible data, touched by the CPU while other threads' kernels run: a
        // segmentation fault where concurrentManagedAccess = 0 (the Guide, N.2.2.1).
        table.add_row({"legacy NULL stream, shared by all threads", "not run", "(would fault)"});
    }
    row("(one task alone, own stream)", m.alone_ms);
    table.print();
}

// Why the legacy stream's cost cannot show on this machine, or "": the own-stream way is fast
// only where the threads' kernels can run side by side and the threads themselves can run at once.
std::string why_cost_cannot_show(int device, bool legacy_runs) {
    if (!legacy_runs) return "the legacy-stream way cannot run here (concurrentManagedAccess = 0)";
    if (tutorial::device_attribute(device, cudaDevAttrConcurrentKernels) != 1)
        return "concurrentKernels = 0: kernels of different streams run one at a time here, so "
               "a stream per thread cannot be faster";
    const unsigned cpus = std::thread::hardware_concurrency();
    if (cpus != 0 && cpus < threads + 1)
        return tutorial::format(
            "this host has %u logical CPUs: %d threads cannot run their "
            "loops at once",
            cpus, threads);
    const Work work = work_for(device, threads);
    return tutorial::why_too_little_free(
        std::size_t{threads} * work.elements * sizeof(unsigned),
        "for every thread's data on the GPU at once: the driver would evict one thread's pages "
        "for another's, and the migrations, not the streams, would set the time");
}

}  // namespace

tutorial::Result run_threads(tutorial::Context& ctx) {
    const Work work = work_for(ctx.device, threads);
    const int runs = ctx.iters_or(ctx.quick() ? 3 : 5);
    const bool legacy_runs =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    std::printf(
        "%d host threads, each running the appendix's run_task: its own stream, %d elements of\n"
        "managed memory allocated with cudaMemAttachHost and attached to that stream, then %d\n"
        "times: a kernel (%d blocks of 256 threads, %d steps per element), wait for the stream,\n"
        "CPU work on the same data; a last kernel. The threads start their loops together and\n"
        "the time is until the last loop ends. Each round runs every way once (one task alone,\n"
        "then the %d threads with three kinds of stream); medians of %d rounds after a "
        "warm-up.\n\n",
        threads, work.elements, work.iterations, work.blocks, work.rounds, threads, runs);
    int wrong = walkthrough(ctx.device, threads).wrong;  // the warm-up
    const Medians m = time_rounds(ctx.device, runs, legacy_runs, wrong);
    print_times(m, legacy_runs);
    std::printf(
        "\nWith a stream each, the threads' kernels run side by side and one thread's CPU work\n"
        "overlaps the others' kernels. In the legacy NULL stream every kernel waits for every\n"
        "earlier kernel of every thread, and each thread's cudaStreamSynchronize waits for the\n"
        "other threads' work too. Every run's data was checked against the CPU's prediction.\n\n");
    ctx.claim(tutorial::at_least("legacy_stream_slower",
                                 "the legacy NULL stream makes the threads slower than a stream "
                                 "each (wall time, legacy / own streams)",
                                 legacy_runs ? m.legacy_ms / m.own_ms : 0.0, 1.3, "x",
                                 "the threads' kernels could not run side by side even in their "
                                 "own streams (a GPU busy with another program's work?), or the "
                                 "program was built with --default-stream per-thread")
                  .again([&] {
                      const Medians n = time_rounds(ctx.device, runs, legacy_runs, wrong);
                      return n.legacy_ms / n.own_ms;
                  }),
              why_cost_cannot_show(ctx.device, legacy_runs));
    return ctx.verdict(wrong == 0,
                       tutorial::format("every thread's final data matched the CPU's prediction "
                                        "in every way and round (%d values wrong)",
                                        wrong));
}

TUTORIAL_SECTION(threads, run_threads);
