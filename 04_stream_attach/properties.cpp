// Section properties: the two device attributes that decide what attaching managed memory to a
// stream is for, and the quick experiment that shows what concurrentKernels predicts.
// (checks/properties.cpp also tries concurrentManagedAccess in a child, and judges both.)
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/timing.hpp"

namespace {

struct StreamProperties {
    int concurrent_managed_access;  // 0: attaching decides what the CPU may touch
    int concurrent_kernels;         // kernels of different streams may run side by side
};

// Step 1. The two properties.
StreamProperties stream_properties(int device) {
    StreamProperties p{};
    CUDA_CHECK(cudaDeviceGetAttribute(&p.concurrent_managed_access,
                                      cudaDevAttrConcurrentManagedAccess, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.concurrent_kernels, cudaDevAttrConcurrentKernels, device));
    return p;
}

// Step 2. What concurrentKernels = 1 predicts, tried: two 50 ms kernels in two streams take about
// 50 ms side by side, 100 ms in turns. (The events of median_event_ms, in the legacy default
// stream, bracket the work of both blocking streams.)
double two_kernels_ms() {
    cudaStream_t first = nullptr;
    cudaStream_t second = nullptr;
    CUDA_CHECK(cudaStreamCreate(&first));
    CUDA_CHECK(cudaStreamCreate(&second));
    const double ms = tutorial::median_event_ms(0, 1, [&] {
        tutorial::launch_busy(first, 50.0);
        tutorial::launch_busy(second, 50.0);
    });
    CUDA_CHECK(cudaStreamDestroy(first));
    CUDA_CHECK(cudaStreamDestroy(second));
    return ms;
}

}  // namespace
