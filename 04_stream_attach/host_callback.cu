// Section `host_callback`: the CPU using managed data inside a stream callback
// (cudaLaunchHostFunc), and a callback with no device work after it used to wake a waiting host
// thread, as the Unified Memory appendix allows.
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/report.hpp"
#include "common/harness/chapter.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>

namespace {

constexpr int count = 1 << 20;
constexpr double busy_ms = 100.0;  // long enough that the host is surely waiting before it ends

__global__ void fill_multiple(int* data, int n, int factor) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        data[i] = factor * i;
    }
}

__global__ void count_not_multiple(const int* data, int n, int factor, unsigned int* wrong) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        if (data[i] != factor * i) atomicAdd(wrong, 1u);
    }
}

struct CallbackResult {
    int wrong_in_callback = 0;     // part 1: the kernel's values, as the callback saw them
    unsigned int wrong_after = 0;  // part 1: the callback's values, as the next kernel saw them
    cudaError_t before_wait = cudaSuccess;  // part 2: cudaStreamQuery when the host began to wait
    bool woken = false;
    double waited_ms = 0.0;
    cudaError_t at_wake = cudaErrorNotReady;  // part 2: cudaEventQuery of the kernel's event
    int wrong_at_wake = 0;                    // part 2: values the host read once woken
};

// lesson:begin
// Part 1. The callback runs once the kernel before it has finished; the kernel after it starts
// only when it returns. It must not call CUDA itself (the cudaLaunchHostFunc entry forbids it).
struct DoubleJob {
    int* data;
    int wrong_seen = 0;  // values the callback found not equal to i
};

void CUDART_CB check_and_double(void* user) {
    auto* job = static_cast<DoubleJob*>(user);
    for (int i = 0; i < count; ++i) {
        job->wrong_seen += job->data[i] != i ? 1 : 0;
        job->data[i] = 2 * i;
    }
}

void work_in_callback(cudaStream_t stream, int* data, unsigned int* wrong, CallbackResult& r) {
    // Attached to the stream, the data is the callback's on every system: the stream counts as
    // idle while its host function runs.
    CUDA_CHECK(cudaStreamAttachMemAsync(stream, data));
    CUDA_CHECK(cudaStreamAttachMemAsync(stream, wrong));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    DoubleJob job{data};
    *wrong = 0;
    fill_multiple<<<256, 256, 0, stream>>>(data, count, 1);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaLaunchHostFunc(stream, check_and_double, &job));
    count_not_multiple<<<256, 256, 0, stream>>>(data, count, 2, wrong);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    r.wrong_in_callback = job.wrong_seen;
    r.wrong_after = *wrong;
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

// Part 2. A callback that only signals: a host thread sleeping on the condition variable wakes
// when everything queued before the callback has finished.
struct Signal {
    std::mutex mutex;
    std::condition_variable ready;
    bool done = false;
};

void CUDART_CB notify(void* user) {
    auto* signal = static_cast<Signal*>(user);
    {
        std::lock_guard<std::mutex> lock(signal->mutex);
        signal->done = true;
    }
    signal->ready.notify_one();
}

void wait_for_callback(cudaStream_t stream, int* data, CallbackResult& r) {
    Signal signal;
    cudaEvent_t filled = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
    tutorial::launch_busy(stream, busy_ms);
    fill_multiple<<<256, 256, 0, stream>>>(data, count, 3);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(filled, stream));
    CUDA_CHECK(cudaLaunchHostFunc(stream, notify, &signal));
    const auto start = std::chrono::steady_clock::now();
    r.before_wait = cudaStreamQuery(stream);
    {
        std::unique_lock<std::mutex> lock(signal.mutex);
        r.woken =
            signal.ready.wait_for(lock, std::chrono::seconds(30), [&] { return signal.done; });
    }
    r.waited_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    r.at_wake = cudaEventQuery(filled);
    for (int i = 0; i < count; ++i) r.wrong_at_wake += data[i] != 3 * i ? 1 : 0;
    CUDA_CHECK(cudaStreamSynchronize(stream));  // the callback itself has returned too
    CUDA_CHECK(cudaEventDestroy(filled));
}

CallbackResult measure_callbacks() {
    int* data = nullptr;
    unsigned int* wrong = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, count * sizeof(int)));
    CUDA_CHECK(cudaMallocManaged(&wrong, sizeof *wrong));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CallbackResult r;
    work_in_callback(stream, data, wrong, r);
    wait_for_callback(stream, data, r);
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(wrong));
    CUDA_CHECK(cudaFree(data));
    return r;
}

}  // namespace

tutorial::Result run_host_callback(tutorial::Context& ctx) {
    std::printf(
        "1. One stream: a kernel writes data[i] = i; a callback (cudaLaunchHostFunc) checks\n"
        "   every value on the CPU and writes 2 * i; a second kernel checks for 2 * i.\n"
        "2. The stream runs a %.0f ms kernel, a kernel writing 3 * i, an event, then a callback\n"
        "   that only signals a condition variable. The host thread sleeps on it, then reads.\n\n",
        busy_ms);
    const CallbackResult r = measure_callbacks();
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    std::printf("   1. wrong values the callback saw: %d of %d; the kernel after it saw: %u\n",
                r.wrong_in_callback, count, r.wrong_after);
    std::printf(
        "   2. cudaStreamQuery as the host began to wait: %s; woken by the callback: %s, after\n"
        "      %.1f ms; cudaEventQuery(kernel's event) then: %s; wrong values read: %d of %d\n\n",
        cudaGetErrorName(r.before_wait), r.woken ? "yes" : "no (timed out)", r.waited_ms,
        cudaGetErrorName(r.at_wake), r.wrong_at_wake, count);
    std::printf(
        "A callback runs once all work before it in its stream is done, and work after it\n"
        "waits for it to return. The stream counts as idle while it runs, so it may use the\n"
        "managed data attached to that stream on every system (concurrentManagedAccess is %d\n"
        "here). For globally visible data, where it is 0, the Guide (N.2.2.2) allows a\n"
        "callback to touch it only while no other stream that may use managed data is active.\n\n",
        concurrent ? 1 : 0);
    const bool in_callback = r.wrong_in_callback == 0 && r.wrong_after == 0;
    const bool woke_after_work = r.before_wait == cudaErrorNotReady && r.woken &&
                                 r.at_wake == cudaSuccess && r.wrong_at_wake == 0;
    ctx.claim(tutorial::documented(
        "inside a stream callback the CPU may use the stream's managed data", in_callback,
        tutorial::format("the callback saw %d wrong values of the kernel before it, the kernel "
                         "after it saw %u wrong of the callback's",
                         r.wrong_in_callback, r.wrong_after),
        "the callback ran before the kernel finished, or the next kernel did not wait for it",
        "Runtime API reference: cudaLaunchHostFunc"));
    ctx.claim(tutorial::documented(
        "a callback with no device work after it can wake a waiting host thread", woke_after_work,
        tutorial::format("the work was %s when the host began to wait; woken, it found the "
                         "kernel's event %s and %d wrong values",
                         r.before_wait == cudaErrorNotReady ? "still running" : "already done",
                         cudaGetErrorName(r.at_wake), r.wrong_at_wake),
        "the callback signalled before the kernel was done, or never",
        "Runtime API reference: cudaLaunchHostFunc"));
    return ctx.verdict(in_callback && woke_after_work,
                       "the values the CPU and the kernels saw on each side of a callback");
}

TUTORIAL_SECTION(host_callback, run_host_callback);
