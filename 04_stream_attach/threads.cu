// Section threads: the run_task pattern of the Unified Memory appendix, for several host threads.
// Each thread owns a stream and a managed allocation attached to it. (checks/threads.cu runs it in
// 4 threads with three kinds of stream, times them and checks every thread's data.)
#include "common/check.hpp"
#include "common/timing.hpp"

#include <cstddef>
#include <cstdint>

namespace {

// Affine integer steps, as in chapter 02's async section: real work whose result the CPU can
// predict exactly.
constexpr std::uint32_t step_a = 1664525u;
constexpr std::uint32_t step_c = 1013904223u;

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

// Step 1. Each host thread starts on device 0: it selects the device, then takes its stream. The
// appendix creates one; the per-thread default stream is another; the legacy NULL stream (0) is
// the one every thread shares, shown for its cost.
enum class StreamChoice { own, per_thread, legacy };

cudaStream_t task_stream(int device, StreamChoice choice) {
    CUDA_CHECK(cudaSetDevice(device));
    cudaStream_t stream = nullptr;
    if (choice == StreamChoice::own) CUDA_CHECK(cudaStreamCreate(&stream));
    if (choice == StreamChoice::per_thread) stream = cudaStreamPerThread;
    return stream;
}

// Step 2. The task's data: allocated attached to the host (cudaMemAttachHost: no kernel of
// another thread can be using it), then attached to this thread's stream. The legacy stream is
// shared by every thread, so there it stays global.
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

struct Work {
    int elements;
    int iterations;
    int rounds;
};

// Step 3. The loop: a kernel in the thread's stream, a wait for that stream only, and the CPU
// uses the data while other threads' kernels may still run. Returns its time in ms: what the
// streams change.
double task_loop(cudaStream_t stream, std::uint32_t* data, const Work& work, std::uint32_t task) {
    tutorial::HostTimer timer;
    for (int it = 0; it < work.iterations; ++it) {
        transform<<<8, 256, 0, stream>>>(data, work.elements, work.rounds);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        host_process(data, work.elements, task);
    }
    transform<<<8, 256, 0, stream>>>(data, work.elements, work.rounds);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return timer.elapsed_ms();
}

// Step 4. The end of the task: free the data (cudaFree waits for the whole device) and the
// stream, if the thread created one.
void task_end(cudaStream_t stream, std::uint32_t* data, StreamChoice choice) {
    CUDA_CHECK(cudaFree(data));
    if (choice == StreamChoice::own) CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace
