// Checks of section attach_wrong_variable: runs ../attach_wrong_variable.cu's walkthrough in a
// child process (a segmentation fault there ends the child, not the section; its steps tell how
// far it got), where it ends early the later steps in children of their own, and judges each
// step against the Guide and the cudaStreamAttachMemAsync entry.
#include "04_stream_attach/attach_wrong_variable.cu"

#include "../helpers/attach_rules.hpp"
#include "../helpers/step_watch.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdlib>
#include <string>
#include <vector>

using tutorial::ChildResult;
using tutorial::Entry;

namespace {

// One line per attach call: "<call> -> <what it returned> (allowed|not allowed)".
void print_answers(const AttachAnswers& a) {
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
}

int device_of(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    return device;
}

}  // namespace

// Child role: the walkthrough, a line per step as it begins (flushed: printed even if the next
// write ends the process), then what it found.
int child_walkthrough(const std::vector<std::string>& args) {
    device_of(args);
    StepWatch watch(true);
    const Found found = walkthrough();
    std::printf("x, y after step 1 -> %d, %d\n", found.x, found.y);
    print_answers(found.answers);
    return 0;
}

// Child roles for one step each, where the walkthrough's child ended before it (and for
// `properties`, which tries step 1).
int child_wrong_variable(const std::vector<std::string>& args) {
    device_of(args);
    StepWatch watch(true);
    write_y_with_x_attached();
    std::printf("x, y after step 1 -> %d, %d\n", x, y);
    return x == 10 && y == 20 ? 0 : 3;
}

int child_attach_rules(const std::vector<std::string>& args) {
    device_of(args);
    StepWatch watch(true);
    print_answers(attach_rules());
    return 0;
}

int child_attach_pending(const std::vector<std::string>& args) {
    device_of(args);
    StepWatch watch(true);
    write_before_queued_attach();
    return 0;
}

namespace {

// The name of the last step a child began ("" if none): where it was when it ended.
std::string last_step(const ChildResult& child) {
    const std::string mark = "step \"";
    const std::size_t at = child.output.rfind(mark);
    if (at == std::string::npos) return "";
    const std::size_t end = child.output.find('"', at + mark.size());
    return child.output.substr(at + mark.size(), end - at - mark.size());
}

// A child's answer to `call`, up to the first space ("cudaErrorInvalidValue (not allowed)" gives
// "cudaErrorInvalidValue"), or what child_answer says instead.
std::string answer_name(const ChildResult& child, const std::string& call) {
    const std::string answer = tutorial::child_answer(child, call);
    return answer.substr(0, answer.find(' '));
}

// A child that ended with a segmentation fault at the CPU write of the step `step`.
bool faulted_at(const ChildResult& child, const tutorial::Step& step) {
    return segfaulted(child) && last_step(child) == step.name;
}

// Step 2: what the call accepted and refused, and whether it returned while the kernel queued
// before it still ran. True if every answer the reference promises came as it says.
bool judge_rules(tutorial::Context& ctx, const ChildResult& rules) {
    const std::string null_single = answer_name(rules, "Single, the NULL stream");
    const std::string half = answer_name(rules, "Single, own stream, half the size");
    int accepted = 0;
    for (const char* call : {"Single, own stream, length 0", "Single, own stream, whole size",
                             "Host, the NULL stream", "Global, own stream"}) {
        accepted += answer_name(rules, call) == "cudaSuccess" ? 1 : 0;
    }
    const bool refused = null_single.rfind("cudaError", 0) == 0;
    ctx.claim(tutorial::documented(
        "single_null_refused",
        "cudaStreamAttachMemAsync returns an error for cudaMemAttachSingle on the NULL stream",
        refused, "it returned " + null_single,
        "this driver accepts an attach the reference forbids",
        Entry{"Runtime API reference: cudaStreamAttachMemAsync", "NULL returned", "will"}));
    // The entry says what the call does, in the present tense: it enqueues an operation in the
    // stream that sets the association of length bytes at devPtr. An attach within its rules
    // (its flags, length 0 or the whole size, Single never on the NULL stream) is that call.
    const bool valid_accepted = ctx.claim(tutorial::documented(
        "valid_attaches_accepted",
        "it accepts each flag it lists where the entry allows it: Single with length 0 or the "
        "whole size, Host on the NULL stream, Global",
        accepted == 4, tutorial::format("%d of the four returned cudaSuccess", accepted),
        "this driver refused an attach the entry describes",
        Entry{"Runtime API reference: cudaStreamAttachMemAsync", "stream length devPtr",
              "enqueues"}));
    ctx.claim(tutorial::observed(
        "half_size_refused",
        "cudaStreamAttachMemAsync refuses a length that is neither 0 nor the whole allocation",
        half == "cudaErrorInvalidValue", "returned " + half,
        "the cudaStreamAttachMemAsync entry says the length must be 0 or the whole allocation "
        "and names no error for another length"));
    const std::string at_return = tutorial::child_answer(
        rules, std::string("end of \"") + attach_queued.name + "\": the work before it");
    const bool enqueued = at_return == "cudaErrorNotReady";
    // What the call itself does, in the entry's first sentence: it enqueues an operation in the
    // stream (its brief: it attaches asynchronously), so it returns with the attach queued behind
    // the kernel, which still runs. The entry's next sentence, that the attach takes effect only
    // once the work before it is done, says when the attach acts, not when the call returns:
    // queued_attach_write_faults below rests on that one.
    ctx.claim(tutorial::documented(
        "attach_enqueued",
        "cudaStreamAttachMemAsync enqueues the attach in the stream: the call returns while the "
        "kernel queued before it still runs",
        enqueued, "the kernel before it was " + at_return + " as the call returned",
        "the call waited for the work queued before it in the stream",
        Entry{"Runtime API reference: cudaStreamAttachMemAsync", "operation stream association",
              "Enqueues"}));
    return rules.succeeded() && refused && valid_accepted && enqueued;
}

}  // namespace

tutorial::Result run_attach_wrong_variable(tutorial::Context& ctx) {
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    const std::string device = std::to_string(ctx.device);
    std::printf(
        "The walkthrough in a child process (concurrentManagedAccess = %d, so expected: %s):\n"
        "1. x attached to the kernel's stream, the CPU writes y; 2. what cudaStreamAttachMemAsync\n"
        "accepts and refuses, and an attach queued behind a running kernel; 3. the CPU writes\n"
        "data whose attach to the host is still queued.\n",
        concurrent ? 1 : 0,
        concurrent ? "every step works" : "a segmentation fault at the write of step 1");
    const ChildResult story = tutorial::run_child("attach_story", {device});
    tutorial::print_child_output(story);
    std::printf("   The child %s%s.\n", story.describe().c_str(),
                story.succeeded() ? "" : (", in the step \"" + last_step(story) + "\"").c_str());
    // Where the child ended early, the later steps run in children of their own.
    const ChildResult rules =
        story.succeeded() ? story : tutorial::run_child("attach_rules", {device});
    const bool pending_in_story = story.succeeded() || last_step(story) == write_pending.name;
    const ChildResult pending =
        pending_in_story ? story : tutorial::run_child("attach_pending", {device});
    if (!story.succeeded()) {
        std::printf("\nSteps 2 and 3 in children of their own:\n");
        tutorial::print_child_output(rules);
        if (!pending_in_story) tutorial::print_child_output(pending);
        std::printf("   They %s and %s.\n", rules.describe().c_str(), pending.describe().c_str());
    }
    std::printf(
        "\nAttaching x says nothing about y: y keeps global visibility, so where\n"
        "concurrentManagedAccess = 0 the system must assume the running kernel may use it, and\n"
        "the CPU may not touch it. An attach takes effect in stream order: until the kernel\n"
        "before it ends, the data it names is still global. %s\n\n",
        concurrent ? "Here any managed memory may be shared concurrently, so\n"
                     "every write works; the same code crashes on Windows, WSL or Jetson."
                   : "Here that is what the children show.");
    // Both faults: the Unified Memory appendix (N.2.2.1) says that where concurrentManagedAccess
    // = 0, a CPU access while the GPU is active is a segmentation fault (会), even to another
    // managed allocation than the kernel's. Step 1: y is such an allocation; attaching x to
    // stream1 changes nothing of y (the appendix's N.2.2.4 example says this code is an error).
    const bool first = faulted_at(story, write_y);
    ctx.claim(tutorial::documented("wrong_variable_faults",
                                   "with only x attached, the CPU writing y during the kernel is "
                                   "a segmentation fault",
                                   first, "the child " + story.describe(),
                                   "the driver let the CPU touch globally visible managed memory "
                                   "while a kernel ran",
                                   Entry{"Programming Guide, N.2.2.1 GPU Exclusive Access To "
                                         "Managed Memory",
                                         "CPU/GPU 不同的托管内存分配", "会"}),
              attach_rule_not_judged(concurrent));
    const bool rules_right = judge_rules(ctx, rules);
    // Step 3: the attach to the host is stream-ordered (the cudaStreamAttachMemAsync entry: it
    // takes effect only when the work before it in the stream has completed), so while the
    // kernel before it runs the data is still global, and the CPU's write is the access N.2.2.1
    // says is a segmentation fault.
    const bool third = faulted_at(pending, write_pending);
    ctx.claim(tutorial::documented("queued_attach_write_faults",
                                   "while an attach waits behind a kernel, a CPU write to the "
                                   "still global data is a segmentation fault",
                                   third, "the child " + pending.describe(),
                                   "the attach took effect at once instead of in stream order",
                                   Entry{"Programming Guide, N.2.2.1 GPU Exclusive Access To "
                                         "Managed Memory",
                                         "CPU/GPU", "会"}),
              attach_rule_not_judged(concurrent));
    const bool writes_as_predicted = concurrent ? story.succeeded() : first && third;
    return ctx.verdict(writes_as_predicted && rules_right,
                       tutorial::format("the CPU's writes behaved as concurrentManagedAccess = %d "
                                        "predicts, and every attach call returned what the "
                                        "reference promises",
                                        concurrent ? 1 : 0));
}

TUTORIAL_SECTION(attach_wrong_variable, run_attach_wrong_variable);
TUTORIAL_CHILD(attach_story, child_walkthrough);
TUTORIAL_CHILD(wrong_variable, child_wrong_variable);
TUTORIAL_CHILD(attach_rules, child_attach_rules);
TUTORIAL_CHILD(attach_pending, child_attach_pending);
