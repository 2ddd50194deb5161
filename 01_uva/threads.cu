// Section `threads`: device pointers, streams and events belong to the process, not to the host
// thread that created them.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/patterns.hpp"
#include "common/harness/report.hpp"
#include "common/harness/chapter.hpp"

#include <cstdint>
#include <future>
#include <thread>

namespace {

constexpr std::uint32_t seed = 42;

// lesson:begin
// A worker thread uses a buffer and an event the main thread made: both belong to the process.
// Its current device does not: every new host thread starts on device 0, so it sets its own.
// Returns the current device the thread started with.
int worker(int device, std::uint32_t* buffer, std::size_t count, cudaEvent_t done) {
    int before = -1;
    CUDA_CHECK(cudaGetDevice(&before));
    CUDA_CHECK(cudaSetDevice(device));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    fill_on_device_async(buffer, count, seed, stream);  // a kernel writes the main thread's buffer
    CUDA_CHECK(cudaEventRecord(done, stream));          // and records the main thread's event
    CUDA_CHECK(cudaStreamDestroy(stream));  // legal before the kernel ends: it still finishes
    return before;
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

}  // namespace

tutorial::Result run_threads(tutorial::Context& ctx) {
    const std::size_t count = ctx.quick() ? (1 << 20) : (16 << 20);
    std::uint32_t* buffer = nullptr;
    cudaEvent_t done = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer, count * sizeof *buffer));
    CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    std::printf("Main thread: allocated %p and created an event.\n", static_cast<void*>(buffer));

    // To tell a per-thread current device from a process-wide one, the main thread stands on a
    // device other than 0 while the worker starts: possible only with a second GPU.
    const int main_device = ctx.device != 0 || tutorial::device_count() < 2 ? ctx.device : 1;
    CUDA_CHECK(cudaSetDevice(main_device));

    // The worker must not wait on the event before it has been recorded, so the worker says when.
    std::promise<int> recorded;
    int before = -1;  // the worker's current device before it set one
    std::thread thread([&] {
        before = worker(ctx.device, buffer, count, done);
        std::printf(
            "Worker thread: current device was %d, set it to %d, launched a kernel on the\n"
            "main thread's buffer %p and recorded the main thread's event.\n",
            before, ctx.device, static_cast<void*>(buffer));
        recorded.set_value(0);
    });

    recorded.get_future().wait();
    CUDA_CHECK(cudaSetDevice(ctx.device));
    std::printf("Main thread: its current device was %d while the worker started.\n", main_device);
    CUDA_CHECK(cudaEventSynchronize(done));
    const std::size_t wrong = mismatches_on_device(buffer, count, seed);
    std::printf("Main thread: waited on the event; %zu of %zu values wrong.\n", wrong, count);
    thread.join();

    CUDA_CHECK(cudaEventDestroy(done));
    CUDA_CHECK(cudaFree(buffer));
    ctx.claim(tutorial::documented(
        "a device pointer and an event made by one host thread work in another", wrong == 0,
        tutorial::format("the worker's kernel wrote %zu of %zu values right", count - wrong, count),
        "the worker used another device than the one the buffer lives on",
        "Programming Guide, Unified Virtual Address Space (a device pointer or event handle "
        "made by one host thread may be used by any other thread of the process)"));
    ctx.claim(tutorial::documented(
                  "the current device belongs to the host thread: a new thread starts on device "
                  "0 while the main thread stands on another",
                  before == 0,
                  tutorial::format("the main thread on device %d, the worker's cudaGetDevice "
                                   "said %d",
                                   main_device, before),
                  "the current device is shared by the process's threads",
                  "Runtime API reference: cudaSetDevice, cudaGetDevice (the current device of "
                  "the calling host thread); Programming Guide, Device Selection (device 0 "
                  "until cudaSetDevice is called)"),
              main_device == 0 ? "with one GPU the main thread is on device 0 too, so a "
                                 "process-wide current device would also read 0"
                               : "");
    return ctx.verdict(wrong == 0, tutorial::format("all %zu values the worker thread's kernel "
                                                    "wrote are in the main thread's buffer",
                                                    count));
}

TUTORIAL_SECTION(threads, run_threads);
