// Checks of section properties: reads the two attributes with ../properties.cpp, tries what each
// predicts (concurrentManagedAccess in a child that may crash, concurrentKernels by timing) and
// judges each prediction.
#include "04_stream_attach/properties.cpp"

#include "../helpers/attach_rules.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/predictions.hpp"
#include "common/harness/report.hpp"

#include <string>
#include <vector>

using tutorial::Prediction;

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
    // write works where it is 1, and is a segmentation fault where it is 0. The cudaDeviceAttr
    // entry says only that a device with concurrentKernels = 1 can possibly run kernels side by
    // side, so that prediction is a timing.
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
