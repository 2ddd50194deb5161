// Checks of section threads: runs ../threads.cu, prints what the main thread and the worker saw,
// and judges it.
#include "01_uva/threads.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <cstdio>

tutorial::Result run_threads(tutorial::Context& ctx) {
    const std::size_t count = ctx.quick() ? (1 << 20) : (16 << 20);
    const Found r = walkthrough(ctx.device, count);
    const int before = r.worker_started_on;
    const int main_device = r.main_device;
    const std::size_t wrong = r.wrong;
    std::printf("Main thread: allocated %zu values on device %d and created an event.\n", count,
                ctx.device);
    std::printf("Main thread: its current device was %d while the worker started.\n", main_device);
    std::printf(
        "Worker thread: current device was %d, set it to %d, launched a kernel on the\n"
        "main thread's buffer and recorded the main thread's event.\n",
        before, ctx.device);
    std::printf("Main thread: waited on the event; %zu of %zu values wrong.\n\n", wrong, count);

    // The Guide's section on unified addressing: a device pointer or event handle made by one
    // host thread can be used by any other thread of the process.
    ctx.claim(tutorial::documented(
        "pointer_and_event_shared",
        "a device pointer and an event made by one host thread work in another", wrong == 0,
        tutorial::format("the worker's kernel wrote %zu of %zu values right", count - wrong, count),
        "the worker used another device than the one the buffer lives on",
        tutorial::Entry{"Programming Guide, Unified Virtual Address Space", "thread process",
                        "can"}));
    // cudaGetDevice returns the current device of the calling host thread; on which device a new
    // thread starts, its entry does not say: what this driver did is observed.
    ctx.claim(
        tutorial::observed(
            "current_device_per_thread",
            "a new host thread does not start on the device the main thread made current",
            before != main_device,
            tutorial::format("the main thread on device %d, the worker's cudaGetDevice "
                             "said %d",
                             main_device, before),
            "the cudaGetDevice entry returns the current device for the calling host thread; it "
            "does not say which device a new thread starts on"),
        main_device == 0 ? "with one GPU the main thread is on device 0 too, where a new "
                           "thread starts as well, so a process-wide current device would "
                           "read the same"
                         : "");
    return ctx.verdict(wrong == 0, tutorial::format("all %zu values the worker thread's kernel "
                                                    "wrote are in the main thread's buffer",
                                                    count));
}

TUTORIAL_SECTION(threads, run_threads);
