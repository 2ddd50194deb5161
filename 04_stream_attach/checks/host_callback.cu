// Checks of section host_callback: runs both steps of ../host_callback.cu, prints what the
// callbacks, the kernels and the waiting host saw, and judges it against the cudaLaunchHostFunc
// entry.
#include "04_stream_attach/host_callback.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <cstdio>

tutorial::Result run_host_callback(tutorial::Context& ctx) {
    std::printf(
        "1. One stream: a kernel writes data[i] = i; a callback (cudaLaunchHostFunc) checks\n"
        "   every value on the CPU and writes 2 * i; a second kernel checks for 2 * i.\n"
        "2. The stream runs a %.0f ms kernel, a kernel writing 3 * i, an event, then a callback\n"
        "   that only signals a condition variable. The host thread sleeps on it, then reads.\n\n",
        busy_ms);
    const CallbackResult r = callbacks();
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    std::printf("   1. wrong values the callback saw: %d of %d; the kernel after it saw: %u\n",
                r.wrong_in_callback, count, r.wrong_after);
    std::printf(
        "   2. cudaStreamQuery as the host began to wait: %s; woken by the callback: %s, after\n"
        "      %.1f ms; cudaEventQuery(kernel's event) then: %s; wrong values read: %d of %d\n\n",
        cudaGetErrorName(r.before_wait), r.woken ? "yes" : "no (timed out)", r.waited_ms,
        cudaGetErrorName(r.at_wake), r.wrong_at_wake, count);
    std::printf(
        "A callback runs once all work before it in its stream is done, and work after it\n"
        "waits for it to return. The stream counts as idle while it runs, so it may use the\n"
        "managed data attached to that stream on every system (concurrentManagedAccess is %d\n"
        "here). For globally visible data, where it is 0, the Guide (N.2.2.2) allows a\n"
        "callback to touch it only while no other stream that may use managed data is active.\n\n",
        concurrent ? 1 : 0);
    const bool in_callback = r.wrong_in_callback == 0 && r.wrong_after == 0;
    const bool woke_after_work = r.before_wait == cudaErrorNotReady && r.woken &&
                                 r.at_wake == cudaSuccess && r.wrong_at_wake == 0;
    ctx.claim(tutorial::documented(
        "inside a stream callback the CPU may use the stream's managed data", in_callback,
        tutorial::format("the callback saw %d wrong values of the kernel before it, the kernel "
                         "after it saw %u wrong of the callback's",
                         r.wrong_in_callback, r.wrong_after),
        "the callback ran before the kernel finished, or the next kernel did not wait for it",
        "Runtime API reference: cudaLaunchHostFunc"));
    ctx.claim(tutorial::documented(
        "a callback with no device work after it can wake a waiting host thread", woke_after_work,
        tutorial::format("the work was %s when the host began to wait; woken, it found the "
                         "kernel's event %s and %d wrong values",
                         r.before_wait == cudaErrorNotReady ? "still running" : "already done",
                         cudaGetErrorName(r.at_wake), r.wrong_at_wake),
        "the callback signalled before the kernel was done, or never",
        "Runtime API reference: cudaLaunchHostFunc"));
    return ctx.verdict(in_callback && woke_after_work,
                       "the values the CPU and the kernels saw on each side of a callback");
}

TUTORIAL_SECTION(host_callback, run_host_callback);
