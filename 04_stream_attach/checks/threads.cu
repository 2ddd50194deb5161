// Checks of section threads: runs the task of ../threads.cu in 4 host threads at once, with a
// stream each, cudaStreamPerThread and the legacy NULL stream; times them against one task alone
// and checks every thread's data against the CPU's prediction.
#include "04_stream_attach/threads.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

namespace {

// Holds every thread until all have arrived. The timed part of each task starts and ends at one
// of these, so that no thread's allocation or cudaFree (which waits for the whole device) falls
// inside another thread's timed loop.
class Barrier {
public:
    explicit Barrier(int threads) : waiting_for_(threads) {}
    void arrive_and_wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        if (--waiting_for_ == 0) {
            all_here_.notify_all();
            return;
        }
        all_here_.wait(lock, [&] { return waiting_for_ == 0; });
    }

private:
    std::mutex mutex_;
    std::condition_variable all_here_;
    int waiting_for_;
};

struct Sync {
    Barrier start, end;
    explicit Sync(int threads) : start(threads), end(threads) {}
};

// One task: the appendix's run_task, the lesson's steps in order. Returns the number of wrong
// values at the end; `loop_ms` gets the time of its kernels-and-CPU-work loop.
int run_task(int device, std::uint32_t task, const Work& work, StreamChoice choice, Sync& sync,
             double& loop_ms) {
    cudaStream_t stream = task_stream(device, choice);
    const std::size_t bytes = work.elements * sizeof(std::uint32_t);
    std::uint32_t* data = task_data(stream, bytes, choice != StreamChoice::legacy);
    for (int i = 0; i < work.elements; ++i) data[i] = static_cast<std::uint32_t>(i) + task;

    sync.start.arrive_and_wait();
    loop_ms = task_loop(stream, data, work, task);
    sync.end.arrive_and_wait();

    // The same steps on the CPU, with each kernel's rounds folded into one affine step.
    std::uint32_t a = 1;
    std::uint32_t c = 0;
    for (int r = 0; r < work.rounds; ++r) {
        a *= step_a;
        c = c * step_a + step_c;
    }
    int wrong = 0;
    for (int i = 0; i < work.elements; ++i) {
        std::uint32_t v = static_cast<std::uint32_t>(i) + task;
        for (int it = 0; it < work.iterations; ++it) v = (a * v + c) ^ task;
        wrong += data[i] != a * v + c;
    }
    task_end(stream, data, choice);
    return wrong;
}

// Runs `threads` tasks at once, one host thread each; returns the wall time of their loops in ms
// (they start together, so the slowest one's) and adds the wrong values to `wrong`.
double run_all(int device, int threads, const Work& work, StreamChoice choice, int& wrong) {
    std::vector<int> wrong_per_task(threads, 0);
    std::vector<double> loop_ms(threads, 0.0);
    Sync sync(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            wrong_per_task[t] =
                run_task(device, static_cast<std::uint32_t>(t + 1), work, choice, sync, loop_ms[t]);
        });
    }
    for (std::thread& thread : pool) thread.join();
    for (int w : wrong_per_task) wrong += w;
    return *std::max_element(loop_ms.begin(), loop_ms.end());
}

}  // namespace

tutorial::Result run_threads(tutorial::Context& ctx) {
    const int threads = 4;
    // Enough GPU work per task (about 10 ms) that the streams, not thread start-up, decide the
    // time; quick mode only takes fewer runs.
    const Work work{1 << 16, 20, 2000};
    const int runs = ctx.iters_or(ctx.quick() ? 3 : 5);
    std::printf(
        "%d host threads, each running the appendix's run_task: its own stream, %d elements of\n"
        "managed memory allocated with cudaMemAttachHost and attached to that stream, then %d\n"
        "times: a kernel (%d rounds of integer work, 8 blocks), wait for the stream, CPU work on\n"
        "the same data; a last kernel. The threads start their loops together (a barrier) and\n"
        "the time is the slowest loop's, median of %d runs after a warm-up.\n\n",
        threads, work.elements, work.iterations, work.rounds, runs);

    struct Variant {
        const char* name;
        StreamChoice choice;
    };
    const Variant variants[] = {
        {"own stream per thread (cudaStreamCreate)", StreamChoice::own},
        {"cudaStreamPerThread", StreamChoice::per_thread},
        {"legacy NULL stream, shared by all threads", StreamChoice::legacy},
    };
    int wrong = 0;
    int single_wrong = 0;
    const double one_task_ms = tutorial::median_ms(
        1, runs, [&] { return run_all(ctx.device, 1, work, StreamChoice::own, single_wrong); });
    tutorial::Table table({{"streams"},
                           {"wall ms", tutorial::Align::right},
                           {"vs one task alone", tutorial::Align::right}});
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    double own_ms = 0.0;
    double legacy_ms = 0.0;
    int variants_run = 0;
    for (const Variant& v : variants) {
        if (v.choice == StreamChoice::legacy && !concurrent) {
            // Globally visible data, touched by the CPU while other threads' kernels run: a
            // segmentation fault where concurrentManagedAccess = 0 (the Guide, N.2.2.1).
            table.add_row({v.name, "not run", "(would fault here)"});
            continue;
        }
        ++variants_run;
        const double ms = tutorial::median_ms(
            1, runs, [&] { return run_all(ctx.device, threads, work, v.choice, wrong); });
        if (v.choice == StreamChoice::own) own_ms = ms;
        if (v.choice == StreamChoice::legacy) legacy_ms = ms;
        table.add_row(
            {v.name, tutorial::format("%.1f", ms), tutorial::format("%.2fx", ms / one_task_ms)});
    }
    table.add_row({"(one task alone, own stream)", tutorial::format("%.1f", one_task_ms), "1.00x"});
    table.print();
    std::printf(
        "\nWith a stream each, the threads' kernels run side by side and one thread's CPU work\n"
        "overlaps the others' kernels. In the legacy NULL stream every kernel waits for every\n"
        "earlier kernel of every thread, and each thread's cudaStreamSynchronize waits for the\n"
        "other threads' work too. Every run's data was checked against the CPU's prediction.\n\n");
    ctx.claim(tutorial::at_least("the legacy NULL stream makes the threads slower than a stream "
                                 "each (wall time, legacy / own streams)",
                                 own_ms > 0.0 ? legacy_ms / own_ms : 0.0, 1.3, "x",
                                 "the threads' kernels could not run side by side even in their "
                                 "own streams (a GPU busy with other work?), or the program was "
                                 "built with --default-stream per-thread"),
              concurrent ? ""
                         : "the legacy-stream variant cannot run here "
                           "(concurrentManagedAccess = 0)");
    return ctx.verdict(wrong == 0 && single_wrong == 0,
                       tutorial::format("every thread's final data matched the CPU's prediction "
                                        "in all %d variants",
                                        variants_run));
}

TUTORIAL_SECTION(threads, run_threads);
