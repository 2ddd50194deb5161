// Section host_callback: the CPU using managed data inside a stream callback (cudaLaunchHostFunc),
// and a callback with no device work after it used to wake a waiting host thread, as the Unified
// Memory appendix allows. (checks/host_callback.cu prints what each side saw and judges it.)
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/timing.hpp"

#include <chrono>
#include <condition_variable>
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

// What the CPU and the kernels saw on each side of the callbacks.
struct CallbackResult {
    int wrong_in_callback = 0;     // step 1: the kernel's values, as the callback saw them
    unsigned int wrong_after = 0;  // step 1: the callback's values, as the next kernel saw them
    cudaError_t before_wait = cudaSuccess;  // step 2: cudaStreamQuery when the host began to wait
    bool woken = false;
    double waited_ms = 0.0;
    cudaError_t at_wake = cudaErrorNotReady;  // step 2: cudaEventQuery of the kernel's event
    int wrong_at_wake = 0;                    // step 2: values the host read once woken
};

// Step 1. The callback runs once the kernel before it has finished; the kernel after it starts
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

// Step 2. A callback that only signals, with no device work after it: a host thread sleeping on
// the condition variable wakes when everything queued before the callback has finished.
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

// The event tells, once the host is woken, whether the kernel before the callback had finished.
void wait_for_callback(cudaStream_t stream, int* data, CallbackResult& r) {
    Signal signal;
    cudaEvent_t filled = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
    tutorial::launch_busy(stream, busy_ms);
    fill_multiple<<<256, 256, 0, stream>>>(data, count, 3);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(filled, stream));
    CUDA_CHECK(cudaLaunchHostFunc(stream, notify, &signal));
    tutorial::HostTimer waiting;
    r.before_wait = cudaStreamQuery(stream);  // cudaErrorNotReady: the work still runs
    {
        std::unique_lock<std::mutex> lock(signal.mutex);
        r.woken =
            signal.ready.wait_for(lock, std::chrono::seconds(30), [&] { return signal.done; });
    }
    r.waited_ms = waiting.elapsed_ms();
    r.at_wake = cudaEventQuery(filled);
    for (int i = 0; i < count; ++i) r.wrong_at_wake += data[i] != 3 * i ? 1 : 0;
    CUDA_CHECK(cudaStreamSynchronize(stream));  // the callback itself has returned too
    CUDA_CHECK(cudaEventDestroy(filled));
}

// Both steps, on one stream and one managed allocation.
CallbackResult callbacks() {
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
