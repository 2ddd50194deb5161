// Section attach_host: the Unified Memory appendix's first stream-association example (N.2.2.4).
// y is attached to the host, so the CPU may write it while a kernel runs, on every system. Alone:
//   nvcc -std=c++17 -I. 04_stream_attach/attach_host.cu common/standalone.cu -o build/attach_host
//   (or in 04_stream_attach/: nvcc -std=c++17 -I.. attach_host.cu ../common/standalone.cu
//       -o ../build/attach_host)  (on the same line)
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/step.hpp"

#include <cstdio>

namespace {

__device__ __managed__ int x;
__device__ __managed__ int y = 2;

__global__ void kernel() {
    x = 10;
}

// What the walkthrough found: x and y once stream1 is done.
struct Found {
    int x, y;
};

// The walkthrough's step, watched wherever steps are: the CPU's write, made while stream1 runs.
constexpr tutorial::Step cpu_writes_y{"the CPU writes y while stream1 runs"};

// The appendix's example. A 100 ms busy kernel ahead of `kernel` keeps stream1 running while the
// CPU writes y, even on a host that is descheduled for a moment.
Found walkthrough() {
    tutorial::load_kernel(kernel);  // or its first launch may wait for the busy kernel
    x = 0;
    y = 2;
    cudaStream_t stream1 = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream1));
    // The attach is queued in stream1 like a kernel; wait for it before relying on it.
    CUDA_CHECK(cudaStreamAttachMemAsync(stream1, &y, 0, cudaMemAttachHost));
    CUDA_CHECK(cudaDeviceSynchronize());
    tutorial::launch_busy(stream1, 100.0);
    kernel<<<1, 1, 0, stream1>>>();
    CUDA_CHECK_LAUNCH();
    {
        const tutorial::During during(cpu_writes_y, stream1);
        y = 20;  // stream1 is still running: allowed, because y is attached to the host
    }
    CUDA_CHECK(cudaStreamSynchronize(stream1));
    CUDA_CHECK(cudaStreamDestroy(stream1));
    return {x, y};
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough();
    times.print();
    std::printf("the CPU wrote y while stream1 ran; afterwards x = %d, y = %d\n", found.x, found.y);
    // The card's answer, as found here. stream1's state at the write (cudaStreamQuery) is read
    // by the chapter's program: ./build/bin/04_stream_attach attach_host.
    std::printf(
        "y = %d and x = %d: the CPU wrote y with 100 ms of work queued in stream1 before "
        "it\n",
        found.y, found.x);
    return found.x == 10 && found.y == 20 ? 0 : 1;
}
#endif
