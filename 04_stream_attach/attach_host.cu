// Section attach_host: the Unified Memory appendix's first stream-association example. y is
// attached to the host, so the CPU may write it while a kernel runs, on every system.
// (checks/attach_host.cu runs it in a child process first, then here, and judges it.)
#include "common/busy.hpp"
#include "common/check.hpp"

namespace {

__device__ __managed__ int x;
__device__ __managed__ int y = 2;

__global__ void kernel() {
    x = 10;
}

// What the CPU saw: whether stream1 was still running when it wrote y, and x and y afterwards.
struct Seen {
    cudaError_t at_write;
    int x, y;
};

// The appendix's example. A 100 ms busy kernel ahead of `kernel` keeps stream1 running while the
// CPU writes y, even on a host that is descheduled for a moment.
Seen attach_y_then_write() {
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
    const cudaError_t at_write = cudaStreamQuery(stream1);
    y = 20;  // stream1 is still running: allowed, because y is attached to the host
    CUDA_CHECK(cudaStreamSynchronize(stream1));
    CUDA_CHECK(cudaStreamDestroy(stream1));
    return {at_write, x, y};
}

}  // namespace
