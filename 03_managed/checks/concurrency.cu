// Checks of section concurrency: runs ../concurrency.cu's step 1 in a child process (it crashes
// where concurrentManagedAccess = 0) and judges it there, then the walkthrough (steps 1 to 4,
// the first two only where they are legal), and prints and judges what each step saw.
#include "03_managed/concurrency.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Child role: step 1, write_y_during_kernel, in a child because it crashes on some systems.
int child_touch_during_kernel(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const cudaError_t at_the_write = write_y_during_kernel();
    std::printf("cudaStreamQuery before y = 20 -> %s\n", cudaGetErrorName(at_the_write));
    std::printf("x = %d, y = %d\n", x, y);
    return x == 10 && y == 20 ? 0 : 3;
}

namespace {

constexpr int polled_expected = 4 * 256 * 10;       // step 3's counter
constexpr int shared_expected = 2 * 8 * 256 * 100;  // step 4's counter, from two streams

// Part 1: the appendix's pitfall, in a child process because it crashes on some systems.
tutorial::ChildResult host_writes_during_kernel(int device, bool concurrent) {
    std::printf(
        "1. The host writes managed y while a kernel writing managed x may still run\n"
        "   (concurrentManagedAccess = %d: expected %s), in a child process:\n",
        concurrent ? 1 : 0, concurrent ? "legal" : "a segmentation fault");
    const tutorial::ChildResult child =
        tutorial::run_child("touch_during_kernel", {std::to_string(device)});
    tutorial::print_child_output(child);
    std::printf("   The child %s.\n", child.describe().c_str());
    return child;
}

// Part 1's claim: the Unified Memory appendix's rule for the host writing managed memory while a
// kernel may run (N.2.2.1): allowed where concurrentManagedAccess = 1, a segmentation fault
// where it is 0 (even for memory the kernel does not use). True if the child did that.
bool judge_host_write(tutorial::Context& ctx, const tutorial::ChildResult& child, bool concurrent,
                      const std::string& serialized) {
    // Under compute-sanitizer a launch can wait for its kernel: then nothing is running at the
    // write, and the claims about writes during a kernel are not judged.
    const bool running =
        tutorial::child_answer(child, "cudaStreamQuery before y = 20") == "cudaErrorNotReady";
    const bool segfault = child.crashed() && child.signal == SIGSEGV;
    const bool part1 =
        (running || !serialized.empty()) && (concurrent ? child.succeeded() : segfault);
    const std::string seen = "the child " + child.describe() +
                             (running ? "" : "; the kernel was not running at the write");
    const std::string why_not_judged = running ? "" : serialized;
    if (concurrent) {
        ctx.claim(tutorial::documented(
                      "host_writes_during_kernel",
                      "with concurrentManagedAccess = 1 the host may write managed memory while "
                      "a kernel runs",
                      part1, seen, "the child's lines say what stopped it",
                      tutorial::Entry{"Runtime API reference: cudaDevAttrConcurrentManagedAccess",
                                      "CPU", "can"}),
                  why_not_judged);
    } else {
        ctx.claim(tutorial::documented(
                      "host_writes_during_kernel",
                      "with concurrentManagedAccess = 0 the host touching managed memory during "
                      "a kernel is a segmentation fault",
                      part1, seen,
                      "the driver let the write through, or the child ended another way; no "
                      "program may rely on that",
                      tutorial::Entry{"Programming Guide, N.2.2.1 GPU Exclusive Access To "
                                      "Managed Memory",
                                      "CPU/GPU", "会"}),
                  why_not_judged);
    }
    return part1;
}

// Part 2: what coherent concurrent access buys. libcu++ permits the sharing; like C++ itself it
// only asks, without promising, that a store become visible to loads in reasonable time.
void claim_host_write(tutorial::Context& ctx, const Found& f) {
    std::printf("\n2. A kernel waits for a managed flag that the host sets while it runs:\n");
    const HostWrite& seen = f.host_write;
    bool part2 = false;
    if (f.concurrent) {
        std::printf(
            "   cudaStreamQuery 50 ms after the launch: %s (the kernel is still waiting)\n"
            "   the host stores 1 into the flag; after cudaStreamSynchronize: %s\n"
            "   the kernel reports: %s\n",
            cudaGetErrorName(seen.while_waiting), cudaGetErrorName(seen.after),
            seen.outcome == 1 ? "it saw the flag" : "it gave up waiting");
        std::printf(
            "   Both sides use cuda::atomic_ref with thread_scope_system, which libcu++ allows\n"
            "   CPU and GPU to share in managed memory where concurrentManagedAccess = 1. Plain\n"
            "   int accesses would be a data race: nothing would oblige the compiler to re-read\n"
            "   the flag, or either side to make its write visible in time or in order.\n");
        part2 = seen.while_waiting == cudaErrorNotReady && seen.after == cudaSuccess &&
                seen.outcome == 1;
    } else {
        std::printf(
            "   Not possible here: the host may not touch managed memory during a kernel.\n");
    }
    ctx.claim(
        tutorial::observed("kernel_sees_host_write",
                           "a running kernel sees a host write to managed memory, through "
                           "system-scope atomics",
                           part2, part2 ? "the kernel saw the flag and finished" : "it did not",
                           "libcu++ lets CPU and GPU share a system-scope atomic in managed "
                           "memory, but promises no time by which a store becomes visible"),
        f.concurrent ? "" : "concurrentManagedAccess is 0 on this device");
}

// Part 3: true if the counter was complete when the host read it.
bool claim_poll_then_read(tutorial::Context& ctx, const Found& f) {
    std::printf("\n3. Polling cudaStreamQuery until the kernel is done, then reading its data:\n");
    std::printf("   cudaErrorNotReady %ld times, then cudaSuccess; counter = %d (expected %d)\n",
                f.polls, f.counter, polled_expected);
    const bool part3 = f.counter == polled_expected;
    // N.2.2.2: a call that logically guarantees the GPU has finished its work is a valid
    // synchronization, and the sentence after says this includes (包括) cudaStreamQuery where it
    // returns cudaSuccess. Under compute-sanitizer a launch can wait for its kernel, leaving
    // nothing to poll for.
    ctx.claim(tutorial::documented("query_success_then_read",
                                   "once cudaStreamQuery returns cudaSuccess, the host may read "
                                   "the kernel's managed results",
                                   part3, part3 ? "the counter was complete" : "it was not",
                                   "the host read before the kernel's atomics had all landed",
                                   tutorial::Entry{"Programming Guide, N.2.2.2 Explicit "
                                                   "Synchronization and Logical GPU Activity",
                                                   "cudaStreamQuery() cudaSuccess", "包括"}),
              f.polls > 0 ? ""
                          : "the kernels had finished before the first query: nothing was "
                            "polled for");
    return part3;
}

// Part 4: true if every value is as expected (and the first kernel still ran at the host's
// writes, where that can be told).
bool claim_four_points(tutorial::Context& ctx, const Found& f, const std::string& serialized) {
    const FourPoints& seen = f.points;
    int gpus = 0;
    CUDA_CHECK(cudaGetDeviceCount(&gpus));
    std::printf(
        "\n4. The appendix's four points:\n"
        "   cudaStreamQuery after the host's writes: %s\n"
        "   point 1: the host wrote pinned non-managed memory during a kernel: %d\n"
        "   point 2: the host wrote other managed memory during a kernel: %s\n"
        "   point 3: kernels in two streams added to the same managed counter: %d "
        "(expected %d)\n"
        "   point 4: kernels on other GPUs may use it too (%d GPU%s here; not tried)\n",
        seen.busy ? "cudaErrorNotReady (the kernel was running)" : "cudaSuccess (it had ended)",
        seen.non_managed, f.concurrent ? "allowed here, done" : "skipped (not allowed here)",
        seen.managed, shared_expected, gpus, gpus == 1 ? "" : "s");
    const bool pinned = seen.non_managed == 1 && (seen.busy || !serialized.empty());
    const bool shared = seen.managed == shared_expected;
    // Point 1 of the appendix's example, which its list of notes states: while the GPU is active,
    // CPU access to non-managed zero-copy data is always allowed (始终允许).
    ctx.claim(
        tutorial::documented(
            "host_writes_pinned", "while a kernel runs the host may write pinned memory", pinned,
            tutorial::format("the host wrote it %s the kernel ran; it read back %d",
                             seen.busy ? "while" : "after", seen.non_managed),
            "the write did not land",
            tutorial::Entry{"Programming Guide, N.2.2.2 Explicit Synchronization and "
                            "Logical GPU Activity",
                            "CPU 非托管", "始终允许"}),
        seen.busy ? "" : serialized);
    // Point 3, as its list of notes states it: concurrent GPU kernels' access to managed data
    // has no restrictions (没有任何限制).
    ctx.claim(tutorial::documented(
        "streams_share_managed", "kernels in two streams may share managed data", shared,
        tutorial::format("the shared counter reached %d of %d", seen.managed, shared_expected),
        "the two kernels' atomics did not both reach the counter",
        tutorial::Entry{"Programming Guide, N.2.2.2 Explicit Synchronization and Logical GPU "
                        "Activity",
                        "并发 GPU 内核 托管数据", "没有任何限制"}));
    return pinned && shared && (!f.concurrent || seen.also_managed == 2);
}

}  // namespace

tutorial::Result run_concurrency(tutorial::Context& ctx) {
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    const std::string serialized = tutorial::why_timing_not_judged();
    const tutorial::ChildResult child = host_writes_during_kernel(ctx.device, concurrent);
    const bool part1 = judge_host_write(ctx, child, concurrent, serialized);
    const Found found = walkthrough(ctx.device);  // steps 1 and 2 only where they are legal
    claim_host_write(ctx, found);
    const bool part3 = claim_poll_then_read(ctx, found);
    const bool part4 = claim_four_points(ctx, found, serialized);
    // Part 2 is observed, so the verdict rests on parts 1, 3 and 4.
    const int ok_parts = part1 + part3 + part4;
    return ctx.verdict(ok_parts == 3, tutorial::format("%d of 3 documented parts behaved as "
                                                       "documented for concurrentManagedAccess = "
                                                       "%d",
                                                       ok_parts, concurrent ? 1 : 0));
}

TUTORIAL_SECTION(concurrency, run_concurrency);
TUTORIAL_CHILD(touch_during_kernel, child_touch_during_kernel);
