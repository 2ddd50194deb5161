// A kernel that keeps a stream busy for a given time, for demos that need "a kernel is still
// running" to be true when the host does something: touch managed memory, query a stream.
#pragma once

#include <cuda_runtime.h>

namespace tutorial {

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
