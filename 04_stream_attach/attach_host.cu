// Section `attach_host`: the Unified Memory appendix's first stream-association example. y is
// attached to the host, so the CPU may write it while a kernel runs, on every system.
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/report.hpp"
#include "sections.hpp"

#include <cstdio>
#include <string>

namespace {

__device__ __managed__ int x;
__device__ __managed__ int y = 2;

__global__ void kernel() {
    x = 10;
}

}  // namespace

tutorial::Result run_attach_host(tutorial::Context& ctx) {
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    cudaStream_t stream1 = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream1));

    // The attach is queued in stream1 like a kernel; wait for it before relying on it.
    CUDA_CHECK(cudaStreamAttachMemAsync(stream1, &y, 0, cudaMemAttachHost));
    CUDA_CHECK(cudaDeviceSynchronize());
    std::printf("y is attached to the host (cudaMemAttachHost) and the attach has completed.\n");

    // A busy kernel first, so that stream1 is certainly still running when the host writes y.
    // 100 ms: long enough that even a host descheduled for a moment queries it still running.
    tutorial::launch_busy(stream1, 100.0);
    kernel<<<1, 1, 0, stream1>>>();
    CUDA_CHECK_LAUNCH();
    const cudaError_t running = cudaStreamQuery(stream1);
    y = 20;
    std::printf(
        "Kernels queued in stream1; cudaStreamQuery(stream1) = %s; the host writes y = 20 now.\n",
        cudaGetErrorName(running));
    CUDA_CHECK(cudaStreamSynchronize(stream1));
    CUDA_CHECK(cudaStreamDestroy(stream1));
    std::printf("After cudaStreamSynchronize: x = %d, y = %d.\n", x, y);

    std::printf(
        "\nBy attaching y to the host, the program promised that no kernel will use y; in\n"
        "return the CPU may touch y while kernels run, even where concurrentManagedAccess = 0\n"
        "(here it is %d%s). A kernel that used y anyway would get undefined results on such\n"
        "systems. x keeps its default, global visibility: there the CPU may read it only after\n"
        "the synchronization.\n",
        concurrent ? 1 : 0, concurrent ? ", so the write would be allowed anyway" : "");
    ctx.claim(
        tutorial::observed("attached to the host, y may be written by the CPU while a "
                           "kernel runs",
                           running == cudaErrorNotReady && y == 20,
                           "the write happened during the kernel and y = " + std::to_string(y),
                           "the kernel had already finished, or the attach did not complete"),
        concurrent ? "concurrentManagedAccess = 1 here, so the CPU may write any managed "
                     "memory during a kernel: this run cannot tell that the attach is what "
                     "allowed it"
                   : "");
    return ctx.verdict(running == cudaErrorNotReady && x == 10 && y == 20,
                       tutorial::format("the host wrote y while stream1 was still running (%s), "
                                        "and afterwards x = %d (expected 10), y = %d (expected 20)",
                                        cudaGetErrorName(running), x, y));
}
