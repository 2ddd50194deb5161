// Checks of section context: runs the walkthrough of ../context.cpp in a fresh child process, and
// its call without cudaSetDevice in another, reads back the state after each call, and judges it
// against the entries that promise it.
#include "02_pinned/context.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdlib>
#include <string>
#include <vector>

using tutorial::ChildResult;

namespace {

// One line per step, "<step> -> active" or "-> inactive", for the parent to read back.
void report_state(const char* step, bool active) {
    std::printf("%-52s -> %s\n", step, active ? "active" : "inactive");
}

struct ContextSteps {
    ChildResult with_set_device;
    ChildResult without_set_device;
    // the state after each step of the first child, then of the second
    std::string before, after_count, after_properties, after_set_device, after_malloc;
    std::string implicit_before, implicit_after_malloc;
};

ContextSteps measure_context_steps(int device) {
    ContextSteps s;
    s.with_set_device = tutorial::run_child("context_steps", {std::to_string(device)});
    const ChildResult& a = s.with_set_device;
    s.before = tutorial::child_answer(a, "before any runtime call");
    s.after_count = tutorial::child_answer(a, "cudaGetDeviceCount");
    s.after_properties = tutorial::child_answer(a, "cudaGetDeviceProperties");
    s.after_set_device = tutorial::child_answer(a, "cudaSetDevice");
    s.after_malloc = tutorial::child_answer(a, "then cudaMalloc");
    s.without_set_device = tutorial::run_child("context_without_set_device", {});
    const ChildResult& b = s.without_set_device;
    s.implicit_before = tutorial::child_answer(b, "before any runtime call");
    s.implicit_after_malloc = tutorial::child_answer(b, "cudaMalloc with no cudaSetDevice");
    return s;
}

}  // namespace

// Child role: the walkthrough, with the primary context's state after each step.
int child_context_steps(const std::vector<std::string>& args) {
    const Found f = walkthrough(std::atoi(args.at(0).c_str()));
    report_state("before any runtime call that needs a device", f.before);
    report_state("cudaGetDeviceCount(&count)", f.after_count);
    report_state("cudaGetDeviceProperties(&prop, device)", f.after_properties);
    report_state("cudaSetDevice(device)", f.after_set_device);
    report_state("then cudaMalloc(&memory_device, 100 * sizeof(float))", f.after_malloc);
    return 0;
}

// Child role: malloc_without_set_device, with the state before and after.
int child_context_without_set_device(const std::vector<std::string>&) {
    report_state("before any runtime call that needs a device", primary_context_active(0));
    report_state("cudaMalloc with no cudaSetDevice before it", malloc_without_set_device());
    return 0;
}

tutorial::Result run_context(tutorial::Context& ctx) {
    std::printf(
        "Two fresh processes ask the driver, after each call, whether the device's primary\n"
        "context exists (cuDevicePrimaryCtxGetState, which never creates one).\n\n"
        "1. Device queries, then cudaSetDevice(%d), then cudaMalloc:\n",
        ctx.device);
    const ContextSteps s = measure_context_steps(ctx.device);
    tutorial::print_child_output(s.with_set_device);
    std::printf("   The child %s.\n", s.with_set_device.describe().c_str());
    std::printf("\n2. cudaMalloc with no cudaSetDevice before it (device 0 is then used):\n");
    tutorial::print_child_output(s.without_set_device);
    std::printf("   The child %s.\n", s.without_set_device.describe().c_str());

    std::printf(
        "\nSince CUDA 12.0, cudaSetDevice creates the primary context itself, so it is the\n"
        "first call that can fail for want of a usable device. With CUDA 11 it only chose the\n"
        "device, and the context came with the first call that needed one (hence the old\n"
        "cudaFree(0) idiom). Without cudaSetDevice that is still how it works: the first\n"
        "call that needs a device creates device 0's primary context.\n\n");
    const bool queries_inactive =
        s.before == "inactive" && s.after_count == "inactive" && s.after_properties == "inactive";
    const bool set_device_creates = s.after_set_device == "active";
    const bool malloc_creates =
        s.implicit_before == "inactive" && s.implicit_after_malloc == "active";
    ctx.claim(tutorial::documented(
        "set_device_creates", "cudaSetDevice creates the device's primary context",
        set_device_creates, "after cudaSetDevice: " + s.after_set_device,
        "this runtime creates the context lazily (CUDA 11 behaviour)",
        tutorial::Entry{"Runtime API reference: cudaSetDevice", "primary initialize", "will"}));
    ctx.claim(tutorial::observed(
        "queries_create_none", "device queries leave the primary context uncreated",
        queries_inactive,
        "before: " + s.before + ", after cudaGetDeviceCount: " + s.after_count +
            ", cudaGetDeviceProperties: " + s.after_properties,
        "the entries of cudaGetDeviceCount and cudaGetDeviceProperties say nothing of the "
        "primary context: whether a query creates it is the runtime's choice"));
    ctx.claim(tutorial::documented(
        "first_malloc_creates",
        "without cudaSetDevice, the first cudaMalloc creates device 0's primary context",
        malloc_creates,
        "before: " + s.implicit_before + ", after cudaMalloc: " + s.implicit_after_malloc,
        "the context existed before any call, or cudaMalloc did not need one",
        tutorial::Entry{"Programming Guide, 3.2.1 Initialization", "cudaInitDevice cudaSetDevice",
                        "will"}));
    const bool children_ok = s.with_set_device.succeeded() && s.without_set_device.succeeded();
    return ctx.verdict(
        children_ok && set_device_creates && malloc_creates && s.after_malloc == "active",
        "the context's state after each call, read from the driver, against the entries named "
        "above");
}

TUTORIAL_SECTION(context, run_context);
TUTORIAL_CHILD(context_steps, child_context_steps);
TUTORIAL_CHILD(context_without_set_device, child_context_without_set_device);
