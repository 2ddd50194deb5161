// Section properties: the two device attributes that decide what attaching managed memory to a
// stream is for, and what concurrentKernels predicts, tried with two kernels in two streams.
// Alone: nvcc -std=c++17 -I. 04_stream_attach/properties.cpp common/standalone.cu -o properties
// Built alone, from the course's folder (mkdir -p build first), then ./build/properties:
//   nvcc -std=c++17 -I. 04_stream_attach/properties.cpp common/standalone.cu -o build/properties
//   (or in 04_stream_attach/: nvcc -std=c++17 -I.. properties.cpp ../common/standalone.cu
//       -o ../build/properties)  (on the same line)
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/step.hpp"

#include <cstdio>

namespace {

// What the walkthrough found: the two properties.
struct Found {
    int concurrent_managed_access;  // 0: attaching decides what the CPU may touch
    int concurrent_kernels;         // 1: kernels of different streams may run side by side
};

// The walkthrough's step, timed wherever steps are watched: its events, in the legacy default
// stream, bracket the work of both streams (blocking streams, which it waits for).
constexpr tutorial::Step two_kernels{"two 50 ms kernels, one in each of two streams"};

Found walkthrough(int device) {
    Found found{};
    // 1. The two properties.
    CUDA_CHECK(cudaDeviceGetAttribute(&found.concurrent_managed_access,
                                      cudaDevAttrConcurrentManagedAccess, device));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&found.concurrent_kernels, cudaDevAttrConcurrentKernels, device));
    // 2. What concurrentKernels = 1 predicts, tried: two 50 ms kernels in two streams take about
    //    50 ms side by side, 100 ms one after the other.
    cudaStream_t first = nullptr;
    cudaStream_t second = nullptr;
    CUDA_CHECK(cudaStreamCreate(&first));
    CUDA_CHECK(cudaStreamCreate(&second));
    {
        const tutorial::During during(two_kernels);
        tutorial::launch_busy(first, 50.0);
        tutorial::launch_busy(second, 50.0);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaStreamDestroy(first));
    CUDA_CHECK(cudaStreamDestroy(second));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(0);
    times.print();
    // The card's number: how long both kernels took together (about 50 ms side by side, 100 ms
    // one after the other). The CPU's write during a kernel is tried in a child, which may crash:
    // ./build/bin/04_stream_attach properties.
    std::printf("%.1f ms for both: two 50 ms kernels of two streams, concurrentKernels = %d\n",
                times.median_ms(two_kernels), found.concurrent_kernels);
    std::printf("device 0: concurrentManagedAccess = %d, concurrentKernels = %d\n",
                found.concurrent_managed_access, found.concurrent_kernels);
    return 0;
}
#endif
