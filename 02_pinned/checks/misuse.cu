// Checks of section misuse: runs the walkthrough of ../misuse.cu and its two faults, each in a
// child process, prints what it returned or how the child ended, and judges the two refusals the
// reference names.
#include "02_pinned/misuse.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <initializer_list>
#include <string>

// Child role: the walkthrough; one line per call, "<call> -> <result>", which the parent reads
// back. The child exits 0 only if the matching calls after the wrong ones all still worked, so a
// mismatched call that freed something shows.
int child_mismatched_calls(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    for (const Misuse& c : walkthrough()) {
        std::printf("%-36s -> %s%s\n", c.call, cudaGetErrorName(c.got),
                    c.got == cudaSuccess ? "  (accepted)" : "");
    }
    return 0;
}

// Child role: hands pinned memory to free(). That is undefined behaviour: the C library looks for
// its own bookkeeping in front of the pointer and may abort, crash, or quietly damage its heap.
int child_free_pinned(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    std::printf("calling free() on memory from cudaMallocHost...\n");
    free_pinned_with_free();
    std::printf("free() returned\n");
    return 0;
}

// Child role: a kernel writes to memory registered with cudaHostRegisterReadOnly. Where the device
// mapped those pages read-only the write faults, and CUDA_CHECK_LAUNCH_SYNC reports it and exits
// 1; the reference names no error for it, and where the device uses the host's page tables the
// write may simply succeed.
int child_write_read_only(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    std::printf("a kernel writes to memory registered with cudaHostRegisterReadOnly...\n");
    const int first = write_read_only_memory();
    std::printf("the kernel finished; host[0] = %d\n", first);
    return 0;
}

namespace {

// ": cudaErrorX" for the first CUDA error named in a child's output, or "".
std::string first_error(const std::string& output) {
    const std::size_t at = output.find("cudaError");
    if (at == std::string::npos) return "";
    const std::size_t end =
        output.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", at);
    return ": " + output.substr(at, end - at);
}

// The calls of the child `mismatched_calls` whose error the reference names.
constexpr const char* register_twice = "cudaHostRegister(registered) again";
constexpr const char* unregister_never = "cudaHostUnregister(malloc'd)";

// The error name at the start of a child's answer ("cudaErrorX" of "cudaErrorX  (note)").
std::string code_of(const std::string& answer) {
    return answer.substr(0, answer.find(' '));
}

void report_misuse_claims(tutorial::Context& ctx, const tutorial::ChildResult& calls,
                          const tutorial::ChildResult& wrote, bool read_only_supported) {
    int refused = 0;
    for (const char* call : {"cudaFree(pinned)", "cudaFreeHost(device)", "cudaFreeHost(malloc'd)",
                             "cudaHostRegister(pinned)"}) {
        refused += code_of(tutorial::child_answer(calls, call)).rfind("cudaError", 0) == 0;
    }
    ctx.claim(tutorial::observed(
        "wrong_free_refused",
        "cudaFree and cudaFreeHost refuse memory of the other allocators, cudaHostRegister "
        "refuses cudaMallocHost memory, and none of them frees anything",
        refused == 4 && calls.succeeded(),
        tutorial::format("%d of 4 refused; then the matching calls freed everything: the child %s",
                         refused, calls.describe().c_str()),
        "the cudaFree and cudaFreeHost entries only say their pointer must come from their own "
        "allocator, and cudaHostRegister names no error for memory cudaMallocHost pinned"));
    ctx.claim(tutorial::documented_error(
        "register_twice_refused", "pinning a range that is already registered is refused",
        code_of(tutorial::child_answer(calls, register_twice)),
        "cudaErrorHostMemoryAlreadyRegistered", "the driver registered the range a second time",
        tutorial::Entry{"Runtime API reference: cudaErrorHostMemoryAlreadyRegistered",
                        "cudaErrorHostMemoryAlreadyRegistered cudaHostRegister", "indicates"}));
    ctx.claim(tutorial::documented_error(
        "unregister_never_refused", "unregistering memory that was never registered is refused",
        code_of(tutorial::child_answer(calls, unregister_never)),
        "cudaErrorHostMemoryNotRegistered", "the driver accepted memory it never registered",
        tutorial::Entry{"Runtime API reference: cudaErrorHostMemoryNotRegistered",
                        "cudaErrorHostMemoryNotRegistered cudaHostUnregister", "indicates"}));
    // Any CUDA error counts: driver 580 reports cudaErrorIllegalAddress.
    const bool faulted = wrote.exited && wrote.exit_code != 0 && !wrote.timed_out;
    ctx.claim(tutorial::observed(
                  "read_only_write_fails",
                  "a kernel writing read-only registered memory fails with a CUDA error", faulted,
                  read_only_supported ? "the child " + wrote.describe() + first_error(wrote.output)
                                      : std::string("not tried"),
                  "the cudaHostRegister entry says the device treats ReadOnly memory as read-only "
                  "and names no error for a write; where the device uses the host's page tables "
                  "the write may simply succeed"),
              read_only_supported ? "" : "hostRegisterReadOnlySupported is 0 on this device");
}

}  // namespace

tutorial::Result run_misuse(tutorial::Context& ctx) {
    const std::vector<std::string> device = {std::to_string(ctx.device)};

    std::printf("1. Memory paired with the wrong free or pin call (in a child process):\n");
    const tutorial::ChildResult calls = tutorial::run_child("mismatched_calls", device);
    tutorial::print_child_output(calls);
    std::printf("   The child %s.\n", calls.describe().c_str());

    std::printf("\n2. free() on pinned memory (in a child process):\n");
    const tutorial::ChildResult freed = tutorial::run_child("free_pinned", device);
    tutorial::print_child_output(freed);
    std::printf("   The child %s (observed with this C library and %s).\n",
                freed.describe().c_str(), tutorial::this_driver().c_str());

    std::printf("\n3. A kernel writing to read-only registered memory (in a child process):\n");
    const bool read_only_supported =
        tutorial::device_attribute(ctx.device, cudaDevAttrHostRegisterReadOnlySupported) == 1;
    tutorial::ChildResult wrote;
    if (!read_only_supported) {
        std::printf("   Not tried: hostRegisterReadOnlySupported is 0 on this device.\n");
    } else {
        wrote = tutorial::run_child("write_read_only", device);
        tutorial::print_child_output(wrote);
        std::printf("   The child %s.\n", wrote.describe().c_str());
    }

    std::printf(
        "\nThe reference names the error for two of the mismatched calls: cudaHostRegister on a\n"
        "range already registered, cudaHostUnregister on memory never registered. cudaFree and\n"
        "cudaFreeHost only say which allocator their pointer must come from, so their refusals\n"
        "above are what this driver did (observed on %s). free() and delete[] cannot check:\n"
        "handing them pinned memory is undefined behaviour, which may abort, crash or silently\n"
        "damage the heap, so the child's end is reported and not judged. A write to memory\n"
        "registered read-only has no error named for it either: where it faults, the CUDA\n"
        "context is lost for good.\n\n",
        tutorial::this_driver().c_str());
    report_misuse_claims(ctx, calls, wrote, read_only_supported);
    const std::string twice = code_of(tutorial::child_answer(calls, register_twice));
    const std::string never = code_of(tutorial::child_answer(calls, unregister_never));
    return ctx.verdict(twice == "cudaErrorHostMemoryAlreadyRegistered" &&
                           never == "cudaErrorHostMemoryNotRegistered",
                       "the two refusals the reference names came back with its codes; the other "
                       "misuses are what this driver did");
}

TUTORIAL_SECTION(misuse, run_misuse);
TUTORIAL_CHILD(mismatched_calls, child_mismatched_calls);
TUTORIAL_CHILD(free_pinned, child_free_pinned);
TUTORIAL_CHILD(write_read_only, child_write_read_only);
