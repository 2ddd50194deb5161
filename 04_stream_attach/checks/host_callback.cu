// Checks of section host_callback: runs ../host_callback.cu's walkthrough and watches its steps:
// each kernel step first holds the stream for 100 ms (a busy kernel queued ahead of the lesson's
// kernel), so that the callback is queued, and the host begins to sleep, while the work before
// them still runs; the stream's state at those moments and the host's sleep are read, and the
// order the cudaLaunchHostFunc entry promises is judged from what each side saw.
#include "04_stream_attach/host_callback.cu"

#include "../helpers/attach_rules.hpp"
#include "../helpers/step_watch.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <string>

namespace {

constexpr double hold_ms = 100.0;

// What each side saw, and what the cudaLaunchHostFunc entry promises about it.
void print_seen(const Found& found, const StepWatch::Seen& queued, const StepWatch::Seen& slept,
                bool concurrent) {
    std::printf(
        "1. the stream as the callback was queued: %s\n"
        "   values the callback found not i: %d of %d; the kernel after it found not 2 * i: %u\n"
        "2. the stream as the host began to sleep: %s; it slept %.1f ms\n"
        "   woken: the kernel before the callback was %s (its event); values read not 3 * i: "
        "%d\n\n",
        cudaGetErrorName(queued.stream_at_begin), found.wrong_in_callback, count, found.wrong_after,
        cudaGetErrorName(slept.stream_at_begin), slept.host_ms,
        cudaGetErrorName(slept.previous_at_end), found.wrong_when_woken);
    std::printf(
        "A callback runs once all work before it in its stream is done, and work after it\n"
        "waits for it to return. The stream counts as idle while it runs, so it may use the\n"
        "managed data attached to that stream on every system (concurrentManagedAccess is %d\n"
        "here). For globally visible data, where it is 0, the Guide (N.2.2.2) allows a\n"
        "callback to touch it only while no other stream that may use managed data is active.\n\n",
        concurrent ? 1 : 0);
}

}  // namespace

tutorial::Result run_host_callback(tutorial::Context& ctx) {
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    std::printf(
        "One stream, its managed data attached to it: 1. a kernel writes data[i] = i; a callback\n"
        "(cudaLaunchHostFunc) checks every value on the CPU and writes 2 * i; a kernel checks\n"
        "for 2 * i. 2. A kernel writes 3 * i; a callback that only signals a condition variable;\n"
        "the host thread sleeps on it, then reads. Each kernel here waits behind %.0f ms of\n"
        "other work in the stream, so that the host is ahead of the GPU when it goes on.\n\n",
        hold_ms);
    // Loaded before the stream is held: a kernel's first launch may wait for the device to be idle
    // while its code loads (lazy loading), which would let the held work end first.
    tutorial::load_kernel(fill_multiple);
    tutorial::load_kernel(count_not_multiple);
    StepWatch watch;
    watch.hold(first_kernel, hold_ms);
    watch.hold(last_kernel, hold_ms);
    const Found found = walkthrough();
    const StepWatch::Seen queued = watch.seen(callback_queued);
    const StepWatch::Seen slept = watch.seen(host_sleeps);
    print_seen(found, queued, slept, concurrent);
    const bool in_order = found.wrong_in_callback == 0 && found.wrong_after == 0;
    ctx.claim(
        tutorial::documented(
            "callback_in_order",
            "a host function runs after the work queued before it, and the work queued "
            "after it waits for it to return",
            in_order,
            tutorial::format("the callback found %d of the kernel's values wrong, the kernel "
                             "after it %u of the callback's",
                             found.wrong_in_callback, found.wrong_after),
            "the callback ran before the kernel finished, or the next kernel did not wait "
            "for it",
            tutorial::Entry{"Runtime API reference: cudaLaunchHostFunc", "called block", "will"}),
        queued.stream_at_begin == cudaErrorNotReady
            ? ""
            : "the kernel had finished before the callback was queued, so the order "
              "could not be seen");
    ctx.claim(tutorial::documented(
                  "callback_uses_stream_data",
                  "inside a stream callback the CPU may use the stream's managed data",
                  found.wrong_in_callback == 0,
                  tutorial::format("the callback saw %d wrong values of the kernel before it, the "
                                   "kernel after it saw %u wrong of the callback's",
                                   found.wrong_in_callback, found.wrong_after),
                  "the CPU could not use the stream's data inside its callback",
                  tutorial::Entry{"Runtime API reference: cudaLaunchHostFunc",
                                  "memory attached stream", "may"}),
              attach_rule_not_judged(concurrent));
    const bool woke_after_work =
        slept.previous_at_end == cudaSuccess && found.wrong_when_woken == 0;
    ctx.claim(tutorial::documented(
                  "signal_after_work",
                  "a callback with no device work after it can wake a waiting host thread",
                  woke_after_work,
                  tutorial::format(
                      "the work was %s when the host began to wait; woken, it found "
                      "the kernel's event %s and %d wrong values",
                      slept.stream_at_begin == cudaErrorNotReady ? "still running" : "already done",
                      cudaGetErrorName(slept.previous_at_end), found.wrong_when_woken),
                  "the callback signalled before the kernel was done",
                  tutorial::Entry{"Runtime API reference: cudaLaunchHostFunc", "signaling", "can"}),
              slept.stream_at_begin == cudaErrorNotReady
                  ? ""
                  : "the work had finished before the host began to wait, so the wake could "
                    "not be seen");
    return ctx.verdict(in_order && woke_after_work,
                       "the values the CPU and the kernels saw on each side of a callback");
}

TUTORIAL_SECTION(host_callback, run_host_callback);
