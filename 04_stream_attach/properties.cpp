// Section `properties`: does this device need stream attach to let the CPU work during kernels?
// Each property predicts a behaviour, and the section tries it (in a child where it can crash).
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/child.hpp"
#include "common/device.hpp"
#include "common/predictions.hpp"
#include "common/report.hpp"
#include "common/timing.hpp"
#include "sections.hpp"

#include <string>

using tutorial::Prediction;

namespace {

struct StreamProperties {
    int concurrent_managed_access;  // 0: attaching decides what the CPU may touch
    int concurrent_kernels;         // kernels of different streams may run side by side
};

// lesson:begin
// The two properties that decide what attaching managed memory to a stream is for.
StreamProperties stream_properties(int device) {
    StreamProperties p{};
    CUDA_CHECK(cudaDeviceGetAttribute(&p.concurrent_managed_access,
                                      cudaDevAttrConcurrentManagedAccess, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.concurrent_kernels, cudaDevAttrConcurrentKernels, device));
    return p;
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

// Two 50 ms kernels in two streams: side by side they end after about 50 ms, in turns after 100.
Prediction concurrent_kernels(int value) {
    cudaStream_t first = nullptr;
    cudaStream_t second = nullptr;
    CUDA_CHECK(cudaStreamCreate(&first));
    CUDA_CHECK(cudaStreamCreate(&second));
    // Events on the legacy default stream bracket the work of both (blocking) streams.
    const double ms = tutorial::median_event_ms(0, 1, [&] {
        tutorial::launch_busy(first, 50.0);
        tutorial::launch_busy(second, 50.0);
    });
    CUDA_CHECK(cudaStreamDestroy(first));
    CUDA_CHECK(cudaStreamDestroy(second));
    const bool side_by_side = ms < 75.0;
    return {"concurrentKernels",
            value,
            value ? "kernels of two streams run side by side" : "kernels run one at a time",
            side_by_side == (value != 0),
            tutorial::format("two 50 ms kernels took %.1f ms together", ms),
            tutorial::Evidence::timing};
}

}  // namespace

tutorial::Result run_properties(tutorial::Context& ctx) {
    const StreamProperties p = stream_properties(ctx.device);
    const int concurrent = p.concurrent_managed_access;
    const int kernels = p.concurrent_kernels;
    // The child of `attach_wrong_variable`: x attached to a stream, the CPU writes y meanwhile.
    const tutorial::ChildResult child =
        tutorial::run_child("wrong_variable", {std::to_string(ctx.device)});
    const std::vector<Prediction> predictions = {
        {"concurrentManagedAccess", concurrent,
         concurrent ? "the CPU may write unattached managed memory while a kernel runs"
                    : "a CPU write to unattached managed memory during a kernel is a segfault",
         concurrent ? child.succeeded() : child.crashed(),
         "a child that tried: " + child.describe()},
        concurrent_kernels(kernels),
    };
    return tutorial::check_predictions(
        ctx, predictions,
        concurrent ? "With concurrentManagedAccess = 1 stream attach is a hint for performance;\n"
                     "where it is 0 (Windows, WSL, Jetson) it decides what the CPU may touch."
                   : "With concurrentManagedAccess = 0, stream attach decides what the CPU may\n"
                     "touch while kernels run.");
}
