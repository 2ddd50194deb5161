// Section `properties`: does this device need stream attach to let the CPU work during kernels?
// Each property predicts a behaviour, and the section tries it (in a child where it can crash).
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/harness/child.hpp"
#include "common/device.hpp"
#include "common/harness/predictions.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"
#include "common/harness/chapter.hpp"
#include "helpers/attach_rules.hpp"

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
// The time of both, in ms. The cudaDeviceAttr entry says only that a device with
// concurrentKernels = 1 can possibly run kernels side by side, so this prediction is a timing.
double two_kernels_ms() {
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
    return ms;
}

}  // namespace

tutorial::Result run_properties(tutorial::Context& ctx) {
    const StreamProperties p = stream_properties(ctx.device);
    const int concurrent = p.concurrent_managed_access;
    const int kernels = p.concurrent_kernels;
    // The child of `attach_wrong_variable`: x attached to a stream, the CPU writes y meanwhile.
    const tutorial::ChildResult child =
        tutorial::run_child("wrong_variable", {std::to_string(ctx.device)});
    const double together_ms = two_kernels_ms();
    const bool seen_side_by_side = together_ms < 75.0;
    // The Guide's N.2.2.1 says what each value of concurrentManagedAccess means for the child: the
    // write works where it is 1, and is a segmentation fault where it is 0.
    const std::vector<Prediction> predictions = {
        {"concurrentManagedAccess", concurrent,
         concurrent ? "the CPU may write unattached managed memory while a kernel runs"
                    : "a CPU write to unattached managed memory during a kernel is a segfault",
         concurrent ? child.succeeded() : segfaulted(child),
         "a child that tried: " + child.describe(), tutorial::Evidence::documented,
         "Programming Guide, N.2.2.1 GPU Exclusive Access To Managed Memory"},
        {"concurrentKernels", kernels,
         kernels ? "kernels of two streams run side by side" : "kernels run one at a time",
         seen_side_by_side == (kernels != 0),
         tutorial::format("two 50 ms kernels took %.1f ms together", together_ms),
         tutorial::Evidence::timing},
    };
    return tutorial::check_predictions(
        ctx, predictions,
        concurrent ? "With concurrentManagedAccess = 1 an attach restricts nothing: its promises\n"
                     "bind only devices where it is 0 (Windows, WSL, Jetson), where it decides\n"
                     "what the CPU may touch. The Guide (N.2.2.3) adds that an attach may let\n"
                     "Unified Memory optimise its transfers."
                   : "With concurrentManagedAccess = 0, stream attach decides what the CPU may\n"
                     "touch while kernels run.");
}

TUTORIAL_SECTION(properties, run_properties);
