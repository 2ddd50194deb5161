// Section `threads`: the run_task pattern of the Unified Memory appendix. Each host thread owns a
// stream and a managed allocation attached to that stream, and alternates kernels with CPU work on
// the same data. Then the price of putting every thread's work into the legacy NULL stream instead.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"
#include "common/harness/chapter.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

namespace {

// Affine integer steps, as in chapter 02's async section: real work whose result the CPU can
// predict exactly.
constexpr std::uint32_t step_a = 1664525u;
constexpr std::uint32_t step_c = 1013904223u;

enum class StreamChoice { own, per_thread, legacy };

struct Work {
    int elements;
    int iterations;
    int rounds;
};

// lesson:begin
__global__ void transform(std::uint32_t* data, int n, int rounds) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        std::uint32_t v = data[i];
        for (int r = 0; r < rounds; ++r) v = v * step_a + step_c;
        data[i] = v;
    }
}

void host_process(std::uint32_t* data, int n, std::uint32_t task) {
    for (int i = 0; i < n; ++i) data[i] ^= task;
}

// The appendix's run_task, in two steps. First its data: allocated attached to the host
// (cudaMemAttachHost: no kernel of another thread can be using it), then attached to this
// thread's stream. The legacy stream is shared by every thread, so there it stays global.
std::uint32_t* task_data(cudaStream_t stream, std::size_t bytes, bool attach) {
    std::uint32_t* data = nullptr;
    if (!attach) {
        CUDA_CHECK(cudaMallocManaged(&data, bytes));
        return data;
    }
    CUDA_CHECK(cudaMallocManaged(&data, bytes, cudaMemAttachHost));
    CUDA_CHECK(cudaStreamAttachMemAsync(stream, data));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return data;
}

// Then its loop: a kernel in the thread's stream, a wait for that stream only, and the CPU uses
// the data while other threads' kernels may still run.
void task_loop(cudaStream_t stream, std::uint32_t* data, const Work& work, std::uint32_t task) {
    for (int it = 0; it < work.iterations; ++it) {
        transform<<<8, 256, 0, stream>>>(data, work.elements, work.rounds);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        host_process(data, work.elements, task);
    }
    transform<<<8, 256, 0, stream>>>(data, work.elements, work.rounds);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(stream));
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

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

// One task: the appendix's run_task. Returns the number of wrong values at the end; `loop_ms`
// gets the time of its kernels-and-CPU-work loop.
int run_task(int device, std::uint32_t task, const Work& work, StreamChoice choice, Sync& sync,
             double& loop_ms) {
    CUDA_CHECK(cudaSetDevice(device));  // every new host thread starts on device 0
    cudaStream_t stream = nullptr;
    if (choice == StreamChoice::own) CUDA_CHECK(cudaStreamCreate(&stream));
    if (choice == StreamChoice::per_thread) stream = cudaStreamPerThread;
    const std::size_t bytes = work.elements * sizeof(std::uint32_t);
    std::uint32_t* data = task_data(stream, bytes, choice != StreamChoice::legacy);
    for (int i = 0; i < work.elements; ++i) data[i] = static_cast<std::uint32_t>(i) + task;

    sync.start.arrive_and_wait();
    tutorial::HostTimer timer;
    task_loop(stream, data, work, task);
    loop_ms = timer.elapsed_ms();
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
    CUDA_CHECK(cudaFree(data));
    if (choice == StreamChoice::own) CUDA_CHECK(cudaStreamDestroy(stream));
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
