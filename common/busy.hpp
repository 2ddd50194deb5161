// A kernel that keeps a stream busy for a given time, for demos that need "a kernel is still
// running" to be true when the host does something: touch managed memory, query a stream.
#pragma once

#include <cuda_runtime.h>

namespace tutorial {

// Queues one single-thread kernel on `stream` that returns after `milliseconds` of GPU time
// (measured with the GPU's global nanosecond timer, so clock speed does not matter).
void launch_busy(cudaStream_t stream, double milliseconds);

}  // namespace tutorial
