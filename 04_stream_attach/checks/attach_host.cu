// Checks of section attach_host: runs ../attach_host.cu's walkthrough in a child process (where a
// wrong lesson would end the child, not the section), then in this process, reads stream1's state
// as the CPU writes y (the step cpu_writes_y) and judges the write.
#include "04_stream_attach/attach_host.cu"

#include "../helpers/attach_rules.hpp"
#include "../helpers/step_watch.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdlib>
#include <string>
#include <vector>

// Child role: the walkthrough, where a wrong lesson (the write not allowed after all) would end
// this process with a signal rather than the section's.
int child_attach_host(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    StepWatch watch(true);
    const Found found = walkthrough();
    std::printf("x, y after cudaStreamSynchronize -> %d, %d\n", found.x, found.y);
    return 0;
}

tutorial::Result run_attach_host(tutorial::Context& ctx) {
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    // In a child first; in this process (where the sanitizers watch) only once the child lived.
    const tutorial::ChildResult child =
        tutorial::run_child("attach_host", {std::to_string(ctx.device)});
    const bool child_wrote =
        child.succeeded() &&
        tutorial::child_answer(child, cpu_writes_y.name) == "cudaErrorNotReady" &&
        tutorial::child_answer(child, "x, y after") == "10, 20";
    std::printf("In a child process: it %s, and wrote y while stream1 ran: %s.\n",
                child.describe().c_str(), child_wrote ? "yes" : "no");
    Found found{0, 0};
    cudaError_t at_write = cudaErrorUnknown;
    if (child.succeeded()) {
        StepWatch watch;
        found = walkthrough();
        at_write = watch.seen(cpu_writes_y).stream_at_begin;
        std::printf(
            "In this process: y attached to the host (cudaMemAttachHost), the attach waited "
            "for;\nkernels queued in stream1; cudaStreamQuery(stream1) = %s when the host wrote "
            "y = 20.\nAfter cudaStreamSynchronize: x = %d, y = %d.\n",
            cudaGetErrorName(at_write), found.x, found.y);
    }
    std::printf(
        "\nBy attaching y to the host, the program promised that no kernel will use y; in\n"
        "return the CPU may touch y while kernels run, even where concurrentManagedAccess = 0\n"
        "(here it is %d%s). A kernel that used y anyway would get undefined results on such\n"
        "systems. x keeps its default, global visibility: there the CPU may read it only after\n"
        "the synchronization.\n",
        concurrent ? 1 : 0, concurrent ? ", so the write would be allowed anyway" : "");
    const bool wrote = at_write == cudaErrorNotReady && found.x == 10 && found.y == 20;
    // Judged only where concurrentManagedAccess = 0: elsewhere the write is allowed with or
    // without the attach, so it would show nothing about the attach.
    ctx.claim(tutorial::documented("host_write_allowed",
                                   "attached to the host, y may be written by the CPU while a "
                                   "kernel runs",
                                   child_wrote && wrote,
                                   "the child " + child.describe() + "; here stream1 was " +
                                       cudaGetErrorName(at_write) +
                                       " at the write, and y = " + std::to_string(found.y),
                                   "the kernel had already finished, or the attach did not "
                                   "complete",
                                   tutorial::Entry{"Programming Guide, N.2.2.4 Stream Association "
                                                   "Examples",
                                                   "y CPU", "可以"}),
              attach_rule_not_judged(concurrent));
    return ctx.verdict(wrote && child_wrote,
                       tutorial::format("the host wrote y while stream1 was still running (%s), "
                                        "and afterwards x = %d (expected 10), y = %d (expected 20)",
                                        cudaGetErrorName(at_write), found.x, found.y));
}

TUTORIAL_SECTION(attach_host, run_attach_host);
TUTORIAL_CHILD(attach_host, child_attach_host);
