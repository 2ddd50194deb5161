// A kernel that keeps a stream busy for a given time, for demos that need "a kernel is still
// running" to be true when the host does something: touch managed memory, query a stream.
#pragma once

#include "check.hpp"

#include <cuda_runtime.h>

namespace tutorial {

// With lazy loading (the default since CUDA 12.2) a kernel's code is loaded at its first launch,
// and the Programming Guide's Lazy Loading section warns that loading may need the device to
// synchronize: launched behind a busy kernel for the first time, a kernel may wait for it to end.
// A demo that needs one kernel to start while another still runs loads it first.
template <typename Kernel>
void load_kernel(Kernel* kernel) {
    cudaFuncAttributes attributes{};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
}

// Queues one single-thread kernel on `stream` that returns after `milliseconds` of GPU time
// (measured with the GPU's global nanosecond timer, so clock speed does not matter).
void launch_busy(cudaStream_t stream, double milliseconds);

#ifdef __CUDACC__
// The GPU's global timer, in nanoseconds: real time, whatever the SM clock does. For kernels that
// wait for something and give up after a deadline.
__device__ inline unsigned long long global_nanoseconds() {
    unsigned long long now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    return now;
}
#endif

}  // namespace tutorial
