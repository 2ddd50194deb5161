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
    tutorial::step("the CPU writes y", stream1);
    y = 20;  // stream1 is still running: allowed, because y is attached to the host
    tutorial::step_end();
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
    return found.x == 10 && found.y == 20 ? 0 : 1;
}
#endif
