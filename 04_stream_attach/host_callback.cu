// Section host_callback: the CPU working on a stream's managed data inside a stream callback
// (cudaLaunchHostFunc), and a callback that only wakes a waiting host thread. Alone:
//   nvcc -std=c++17 -I. 04_stream_attach/host_callback.cu common/standalone.cu
//       -o build/host_callback  (on the same line)
//   (or in 04_stream_attach/: nvcc -std=c++17 -I.. host_callback.cu ../common/standalone.cu
//       -o ../build/host_callback)  (on the same line)
#include "common/check.hpp"
#include "common/step.hpp"

#include <condition_variable>
#include <cstdio>
#include <mutex>

namespace {

constexpr int count = 1 << 20;

__global__ void fill_multiple(int* data, int n, int factor) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        data[i] = factor * i;
    }
}

__global__ void count_not_multiple(const int* data, int n, int factor, unsigned* wrong) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        if (data[i] != factor * i) atomicAdd(wrong, 1u);
    }
}

// A callback that works on the data: it checks the kernel's values (i) and writes 2 * i. Like
// every host function, it makes no CUDA call (the cudaLaunchHostFunc entry forbids it).
struct Job {
    int* data;
    int wrong_seen;  // values that were not i
};

void CUDART_CB check_and_double(void* user) {
    auto* job = static_cast<Job*>(user);
    for (int i = 0; i < count; ++i) {
        job->wrong_seen += job->data[i] != i ? 1 : 0;
        job->data[i] = 2 * i;
    }
}

// A callback that only signals: it wakes the host thread waiting on `ready`.
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

// What the walkthrough found: values that were wrong on each side of the callbacks.
struct Found {
    int wrong_in_callback;  // the kernel's values, as the callback saw them
    unsigned wrong_after;   // the callback's values, as the kernel after it saw them
    int wrong_when_woken;   // the last kernel's values, as the woken host thread read them
};

// The walkthrough's steps, each watched wherever steps are (in the stream).
constexpr tutorial::Step first_kernel{"a kernel writes i"};
constexpr tutorial::Step callback_queued{"the callback that checks i and writes 2 * i is queued"};
constexpr tutorial::Step kernel_checks{"a kernel checks for 2 * i"};
constexpr tutorial::Step last_kernel{"a kernel writes 3 * i"};
constexpr tutorial::Step host_sleeps{"the host thread sleeps until the callback signals"};

Found walkthrough() {
    int* data = nullptr;
    unsigned* wrong = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, count * sizeof(int)));
    CUDA_CHECK(cudaMallocManaged(&wrong, sizeof *wrong));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    // Attached to the stream, the data is the callbacks' on every system: the stream counts as
    // idle while a host function of its own runs.
    CUDA_CHECK(cudaStreamAttachMemAsync(stream, data));
    CUDA_CHECK(cudaStreamAttachMemAsync(stream, wrong));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    *wrong = 0;
    Found found{0, 0, 0};

    // 1. A kernel writes i. The callback queued after it runs once the kernel is done, checks
    //    the values on the CPU and writes 2 * i; the kernel queued after the callback starts only
    //    when it returns, and counts the values that are not 2 * i.
    Job job{data, 0};
    {
        const tutorial::During during(first_kernel, stream);
        fill_multiple<<<256, 256, 0, stream>>>(data, count, 1);
        CUDA_CHECK_LAUNCH();
    }
    {
        const tutorial::During during(callback_queued, stream);
        CUDA_CHECK(cudaLaunchHostFunc(stream, check_and_double, &job));
    }
    {
        const tutorial::During during(kernel_checks, stream);
        count_not_multiple<<<256, 256, 0, stream>>>(data, count, 2, wrong);
        CUDA_CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    found.wrong_in_callback = job.wrong_seen;
    found.wrong_after = *wrong;

    // 2. A kernel writes 3 * i, then a callback with no device work after it signals. This
    //    thread sleeps until then and reads the data: the stream stays idle after the callback.
    Signal signal;
    {
        const tutorial::During during(last_kernel, stream);
        fill_multiple<<<256, 256, 0, stream>>>(data, count, 3);
        CUDA_CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaLaunchHostFunc(stream, notify, &signal));
    {
        const tutorial::During during(host_sleeps, stream);
        std::unique_lock<std::mutex> lock(signal.mutex);
        signal.ready.wait(lock, [&] { return signal.done; });
    }
    for (int i = 0; i < count; ++i) found.wrong_when_woken += data[i] != 3 * i ? 1 : 0;

    CUDA_CHECK(cudaStreamSynchronize(stream));  // notify has returned: `signal` may go
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(wrong));
    CUDA_CHECK(cudaFree(data));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough();
    times.print();
    std::printf(
        "wrong values: %d seen by the callback, %u by the kernel after it, %d read by "
        "the woken thread\n",
        found.wrong_in_callback, found.wrong_after, found.wrong_when_woken);
    // The card's answer, as found here: the woken thread's values are the last kernel's only if
    // that kernel was done (the chapter's program also reads its event:
    // ./build/bin/04_stream_attach host_callback).
    const int wrong_total =
        found.wrong_in_callback + static_cast<int>(found.wrong_after) + found.wrong_when_woken;
    std::printf(
        "%d wrong values on every side; the woken thread, after %.1f ms asleep, found the "
        "kernel before the callback %s\n",
        wrong_total, times.median_host_ms(host_sleeps),
        found.wrong_when_woken == 0 ? "done" : "NOT done");
    return found.wrong_in_callback == 0 && found.wrong_after == 0 && found.wrong_when_woken == 0
               ? 0
               : 1;
}
#endif
