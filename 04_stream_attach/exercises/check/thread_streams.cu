// The course's check of exercise ex04_thread_streams (the task is in ../thread_streams.cu): 4
// host threads run the learner's run_tasks() at once; their results must be right and the
// threads must finish sooner than with the given version.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

// Written by the learner (exercises/thread_streams.cu).
std::uint64_t run_tasks_given(std::uint32_t* data, std::size_t count, int tasks);
std::uint64_t run_tasks(std::uint32_t* data, std::size_t count, int tasks);

namespace {

using tutorial::Context;
using tutorial::Result;

constexpr int threads_count = 4;
constexpr int tasks = 20;
constexpr std::size_t count = 1 << 20;  // 4 MiB per thread

// `steps` steps of x -> a*x + c make one step x -> A*x + C (mod 2^32).
std::uint32_t after_steps(std::uint32_t x, int steps) {
    std::uint32_t a = 1, c = 0;
    for (int s = 0; s < steps; ++s) {
        a *= 1664525u;
        c = c * 1664525u + 1013904223u;
    }
    return a * x + c;
}

struct Run {
    double ms = 0.0;
    int wrong = 0;  // threads whose CPU reads or final values were not the kernels'
};

template <typename Tasks>
Run run_threads(Context& ctx, const std::vector<std::uint32_t*>& buffers, Tasks run) {
    Run result;
    std::vector<std::uint64_t> seen(threads_count);
    for (std::uint32_t* data : buffers) {
        for (std::size_t i = 0; i < count; ++i) data[i] = static_cast<std::uint32_t>(i);
    }
    tutorial::HostTimer timer;
    std::vector<std::thread> threads;
    for (int t = 0; t < threads_count; ++t) {
        threads.emplace_back([&, t] {
            CUDA_CHECK(cudaSetDevice(ctx.device));  // a new thread starts on device 0
            seen[t] = run(buffers[t], count, tasks);
        });
    }
    for (std::thread& thread : threads) thread.join();
    result.ms = timer.elapsed_ms();
    std::uint64_t expected_seen = 0;
    for (int k = 1; k <= tasks; ++k) expected_seen += after_steps(0, 64 * k);
    for (int t = 0; t < threads_count; ++t) {
        bool right = seen[t] == expected_seen;
        for (std::size_t i = 0; i < count && right; i += 997) {
            right = buffers[t][i] == after_steps(static_cast<std::uint32_t>(i), 64 * tasks);
        }
        result.wrong += right ? 0 : 1;
    }
    return result;
}

// Medians of 3 rounds (after a warm-up), each running the given version and then yours in 4
// threads: given / yours.
double time_ratio(Context& ctx, const std::vector<std::uint32_t*>& buffers, int& wrong) {
    std::vector<double> given_ms, yours_ms;
    for (int round = 0; round < 4; ++round) {  // round 0 warms up
        const Run given = run_threads(ctx, buffers, run_tasks_given);
        const Run yours = run_threads(ctx, buffers, run_tasks);
        wrong += yours.wrong;
        if (round > 0) {
            given_ms.push_back(given.ms);
            yours_ms.push_back(yours.ms);
        }
    }
    const double given = tutorial::median(given_ms);
    const double yours = tutorial::median(yours_ms);
    std::printf("%d threads x %d tasks: run_tasks_given %.3f ms, run_tasks %.3f ms\n",
                threads_count, tasks, given, yours);
    return given / yours;
}

// Why "sooner" cannot show on this machine, or "": the threads' kernels must be able to run side
// by side, and the threads themselves at once.
std::string why_sooner_cannot_show(int device) {
    if (tutorial::device_attribute(device, cudaDevAttrConcurrentKernels) != 1)
        return "concurrentKernels = 0: kernels of different streams run one at a time here";
    const unsigned cpus = std::thread::hardware_concurrency();
    if (cpus != 0 && cpus < threads_count + 1)
        return tutorial::format("this host has %u logical CPUs: %d threads cannot run at once",
                                cpus, threads_count);
    return "";
}

Result check(Context& ctx) {
    // The given version reads global managed memory while other threads' kernels run.
    if (tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) != 1)
        return ctx.skip(
            "concurrentManagedAccess = 0: the given version's CPU reads of global "
            "managed memory while other threads' kernels run would be a segmentation "
            "fault here (the Guide, N.2.2.1)");
    std::vector<std::uint32_t*> buffers(threads_count);
    for (std::uint32_t*& data : buffers) {
        CUDA_CHECK(cudaMallocManaged(&data, count * sizeof(std::uint32_t), cudaMemAttachGlobal));
    }
    int wrong = 0;
    const double ratio = time_ratio(ctx, buffers, wrong);
    const int runs = 4 * threads_count;
    // Each thread reads its data after synchronizing its own stream, to which the data is
    // attached: cudaStreamSynchronize "Blocks until stream has completed all operations", so the
    // kernels before are done, whatever the other threads' streams are doing.
    ctx.claim(tutorial::documented(
        "right_values", "every thread's CPU reads and final values are the kernels'", wrong == 0,
        std::to_string(wrong) + " wrong thread runs of " + std::to_string(runs),
        "the CPU read data[0] before the thread's kernel finished. First step: "
        "cudaStreamSynchronize the thread's stream after each launch",
        tutorial::Entry{"Runtime API reference: cudaStreamSynchronize", "stream", "blocks"}));
    ctx.claim(tutorial::at_least("sooner_with_streams",
                                 "the threads finish sooner with a stream each (given / yours)",
                                 ratio, 1.5, "x",
                                 "the threads still wait for each other. First step: create a "
                                 "stream per thread with cudaStreamCreateWithFlags(&stream, "
                                 "cudaStreamNonBlocking) and launch on it")
                  .again([&] { return time_ratio(ctx, buffers, wrong); }),
              why_sooner_cannot_show(ctx.device));
    for (std::uint32_t* data : buffers) CUDA_CHECK(cudaFree(data));
    return ctx.verdict(wrong == 0, tutorial::format("%d threads right, %.2fx faster than given",
                                                    threads_count, ratio));
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex04_thread_streams",
        "Exercise (chapter 04_stream_attach): a stream per host thread, its buffer attached",
        {{"check", "run_tasks in 4 threads: right results, sooner than given", {}, true, check}},
        {},
        "04_stream_attach/exercises/thread_streams.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
