// Checks of section attach_wrong_variable: runs each step of ../attach_wrong_variable.cu in a
// child process (a segmentation fault there ends the child, not the section), prints what each
// child saw, and judges it against the Guide and the cudaStreamAttachMemAsync entry.
#include "04_stream_attach/attach_wrong_variable.cu"

#include "../helpers/attach_rules.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Child role: write_y_with_x_attached.
int child_wrong_variable(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    std::printf("x attached to stream1; the kernel runs; the host writes y = 20...\n");
    std::fflush(stdout);  // printed even if the write ends the process
    write_y_with_x_attached();
    std::printf("...and survived: x = %d, y = %d\n", x, y);
    return x == 10 && y == 20 ? 0 : 3;
}

// Child role: what cudaStreamAttachMemAsync accepts and refuses, one line per call, and whether
// the call returns before the kernel queued ahead of it ends. Exit 0 once every line is printed;
// the parent judges the answers.
int child_attach_rules(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const AttachRules rules = attach_rules();
    const AttachAnswers& a = rules.answers;
    struct Case {
        const char* call;
        cudaError_t got;
        bool allowed;
    };
    const Case cases[] = {
        {"Single, the NULL stream", a.single_null_stream, false},
        {"Single, own stream, length 0", a.single_length_0, true},
        {"Single, own stream, whole size", a.single_whole_size, true},
        {"Single, own stream, half the size", a.single_half_size, false},
        {"Host, the NULL stream", a.host_null_stream, true},
        {"Global, own stream", a.global_own_stream, true},
    };
    for (const Case& c : cases) {
        std::printf("%-36s -> %s (%s)\n", c.call, cudaGetErrorName(c.got),
                    c.allowed ? "allowed" : "not allowed");
    }
    std::printf("the %.0f ms kernel's event as the queued attach returned -> %s\n",
                queued_kernel_ms, cudaGetErrorName(rules.queued.at_return));
    std::printf("the kernel's event after cudaStreamSynchronize -> %s\n",
                cudaGetErrorName(rules.queued.after_sync));
    return 0;
}

// Child role: write_before_queued_attach, where the write may end the process.
int child_attach_pending(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    std::printf("attach to the host queued behind a %.0f ms kernel; the host writes now...\n",
                queued_kernel_ms);
    std::fflush(stdout);  // printed even if the write ends the process
    const cudaError_t at_write = write_before_queued_attach();
    std::printf("...and survived; the kernel's event at the write -> %s\n",
                cudaGetErrorName(at_write));
    return 0;
}

namespace {

// The error name a child printed for `call` ("cudaErrorInvalidValue (not allowed)" gives
// "cudaErrorInvalidValue"), or what child_answer says instead.
std::string answer_name(const tutorial::ChildResult& child, const std::string& call) {
    const std::string answer = tutorial::child_answer(child, call);
    return answer.substr(0, answer.find(' '));
}

// Part 1: x attached to the kernel's stream, the CPU writes y. True if it went as
// concurrentManagedAccess predicts.
bool show_wrong_variable(tutorial::Context& ctx, bool concurrent) {
    std::printf(
        "1. x attached to the kernel's stream, the CPU writes y (in a child process;\n"
        "   concurrentManagedAccess = %d, so expected: %s):\n",
        concurrent ? 1 : 0, concurrent ? "it works" : "a segmentation fault");
    const tutorial::ChildResult wrong =
        tutorial::run_child("wrong_variable", {std::to_string(ctx.device)});
    tutorial::print_child_output(wrong);
    std::printf("   The child %s.\n", wrong.describe().c_str());
    std::printf(
        "   Attaching x says nothing about y: y keeps global visibility, so where\n"
        "   concurrentManagedAccess = 0 the system must assume the running kernel may use it\n"
        "   and the CPU may not touch it. %s\n",
        concurrent ? "Here any managed memory may be shared concurrently, so it\n"
                     "   works; the same code crashes on Windows, WSL or Jetson."
                   : "Here that is exactly what happened.");
    ctx.claim(tutorial::documented("with only x attached, the CPU writing y during the kernel is "
                                   "a segmentation fault",
                                   segfaulted(wrong), "the child " + wrong.describe(),
                                   "the driver let the CPU touch globally visible managed memory "
                                   "while a kernel ran",
                                   "Programming Guide, N.2.2.4 Stream Association Examples"),
              attach_rule_not_judged(concurrent));
    return concurrent ? wrong.succeeded() : segfaulted(wrong);
}

// Part 2: the calls cudaStreamAttachMemAsync accepts and refuses, and whether it returns before
// the kernel queued ahead of it ends. True if every answer the reference promises came as it says.
bool show_rules(tutorial::Context& ctx) {
    std::printf("\n2. The rules of cudaStreamAttachMemAsync (in a child process):\n");
    const tutorial::ChildResult rules =
        tutorial::run_child("attach_rules", {std::to_string(ctx.device)});
    tutorial::print_child_output(rules);
    std::printf("   The child %s.\n", rules.describe().c_str());
    const std::string null_single = answer_name(rules, "Single, the NULL stream");
    const std::string half = answer_name(rules, "Single, own stream, half the size");
    int accepted = 0;
    for (const char* call : {"Single, own stream, length 0", "Single, own stream, whole size",
                             "Host, the NULL stream", "Global, own stream"}) {
        accepted += answer_name(rules, call) == "cudaSuccess" ? 1 : 0;
    }
    const bool refused = null_single.rfind("cudaError", 0) == 0;
    const bool as_documented = rules.succeeded() && refused && accepted == 4;
    ctx.claim(tutorial::documented(
        "cudaStreamAttachMemAsync returns an error for cudaMemAttachSingle on the NULL stream, "
        "and accepts Single with length 0 or the whole size, Host on the NULL stream and Global",
        as_documented,
        tutorial::format("Single on the NULL stream returned %s; %d of the other four returned "
                         "cudaSuccess",
                         null_single.c_str(), accepted),
        "this driver accepts an attach the reference forbids, or refuses one it allows",
        "Runtime API reference: cudaStreamAttachMemAsync"));
    ctx.claim(tutorial::observed(
        "cudaStreamAttachMemAsync refuses a length that is neither 0 nor the whole allocation",
        half == "cudaErrorInvalidValue", "returned " + half,
        "the cudaStreamAttachMemAsync entry says the length must be 0 or the whole allocation "
        "and names no error for another length"));
    const std::string at_return = answer_name(rules, "as the queued attach returned");
    const std::string after_sync = answer_name(rules, "after cudaStreamSynchronize");
    const bool enqueued = at_return == "cudaErrorNotReady" && after_sync == "cudaSuccess";
    ctx.claim(tutorial::documented(
        "cudaStreamAttachMemAsync enqueues the attach in the stream: the call returns while the "
        "kernel queued before it still runs",
        enqueued,
        tutorial::format("the kernel's event was %s as the call returned, %s after "
                         "cudaStreamSynchronize",
                         at_return.c_str(), after_sync.c_str()),
        "the call waited for the work queued before it in the stream",
        "Runtime API reference: cudaStreamAttachMemAsync"));
    return as_documented && enqueued;
}

// Part 3: an attach to the host queued behind a running kernel, and a CPU write before it ends.
// True if it went as concurrentManagedAccess predicts.
bool show_pending_attach(tutorial::Context& ctx, bool concurrent) {
    std::printf(
        "\n3. An attach to the host queued behind a running kernel, and a CPU write before the\n"
        "   kernel ends (in a child process; concurrentManagedAccess = %d, so expected: %s):\n",
        concurrent ? 1 : 0, concurrent ? "it works" : "a segmentation fault");
    const tutorial::ChildResult pending =
        tutorial::run_child("attach_pending", {std::to_string(ctx.device)});
    tutorial::print_child_output(pending);
    std::printf("   The child %s.\n", pending.describe().c_str());
    ctx.claim(tutorial::documented("an attach queued behind a running kernel takes effect only "
                                   "when the kernel ends: until then a CPU write to the globally "
                                   "visible data is a segmentation fault",
                                   segfaulted(pending), "the child " + pending.describe(),
                                   "the attach took effect at once instead of in stream order",
                                   "Runtime API reference: cudaStreamAttachMemAsync; Programming "
                                   "Guide, N.2.2.1 GPU Exclusive Access To Managed Memory"),
              attach_rule_not_judged(concurrent));
    return concurrent ? pending.succeeded() : segfaulted(pending);
}

}  // namespace

tutorial::Result run_attach_wrong_variable(tutorial::Context& ctx) {
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    const bool wrong_variable = show_wrong_variable(ctx, concurrent);
    const bool rules = show_rules(ctx);
    const bool pending = show_pending_attach(ctx, concurrent);
    return ctx.verdict(wrong_variable && rules && pending,
                       tutorial::format("the CPU's writes behaved as concurrentManagedAccess = %d "
                                        "predicts, and every attach call returned what the "
                                        "reference promises",
                                        concurrent ? 1 : 0));
}

TUTORIAL_SECTION(attach_wrong_variable, run_attach_wrong_variable);
TUTORIAL_CHILD(wrong_variable, child_wrong_variable);
TUTORIAL_CHILD(attach_rules, child_attach_rules);
TUTORIAL_CHILD(attach_pending, child_attach_pending);
