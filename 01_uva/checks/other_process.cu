// Checks of section other_process: sends a device pointer of this process to a child process,
// which runs ../other_process.cu's walkthrough on it and prints what each call returned; then
// checks that this process's context and buffer are unharmed, and judges both sides.
#include "01_uva/other_process.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Child role: reads a pointer value from stdin and runs the lesson's walkthrough on it.
int child_use_foreign_pointer(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const std::uint32_t* foreign = receive_address();
    std::printf("received the address %p\n", static_cast<const void*>(foreign));
    const Found r = walkthrough(foreign);
    std::printf("cudaPointerGetAttributes: %s, type %s\n", cudaGetErrorName(r.query),
                tutorial::memory_type_name(r.type).c_str());
    std::printf("its own cudaMalloc returned %p, %s\n", r.mine,
                r.mine == foreign ? "the same address as the one received" : "another address");
    std::printf("a kernel reading it: launch %s, then cudaDeviceSynchronize returned %s (%s)\n",
                cudaGetErrorName(r.launch), cudaGetErrorName(r.finish),
                cudaGetErrorString(r.finish));
    std::printf("the next call, cudaFree, returned %s too: the error is sticky\n",
                cudaGetErrorName(r.after));
    return r.finish == cudaSuccess ? 0 : 3;
}

namespace {

// What the parent saw: the child's lines, and its own context and buffer afterwards.
struct Seen {
    tutorial::ChildResult child;
    cudaError_t here;
    std::size_t wrong;
};

void claim_what_was_seen(tutorial::Context& ctx, const Seen& seen, bool unknown_there,
                         bool refused_there, bool kernel_faulted, bool sticky) {
    const tutorial::ChildResult& child = seen.child;
    // The child's own buffer at the parent's address would make the kernel read the child's own
    // memory: then there is nothing foreign to read, and the fault is not judged.
    const bool same_address =
        child.output.find("the same address as the one received") != std::string::npos;
    // cudaPointerGetAttributes: a pointer not allocated in, mapped by or registered with this
    // process's context gives cudaErrorInvalidValue (the sentence that names this case), or, as
    // its note adds from CUDA 11.0 for a host pointer, cudaMemoryTypeUnregistered with
    // cudaSuccess. The Guide's section on unified addressing says why the parent's pointer is
    // such a pointer there: it is not valid outside its process.
    // Any other answer (another error, or a type CUDA knows) is shown as the child printed it.
    const std::size_t line = child.output.find("cudaPointerGetAttributes: ");
    const std::string answer =
        line == std::string::npos
            ? "the child printed no answer of cudaPointerGetAttributes"
            : child.output.substr(line, child.output.find('\n', line) - line) +
                  ", neither answer the entry gives";
    ctx.claim(tutorial::documented(
        "unknown_in_other_process", "in another process this address is not CUDA memory",
        unknown_there,
        !unknown_there  ? answer
        : refused_there ? "cudaPointerGetAttributes there: cudaErrorInvalidValue"
                        : "cudaPointerGetAttributes there: unregistered",
        "the two processes share one address space through some other mechanism",
        tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes",
                        "not allocated cudaErrorInvalidValue", "is returned"}));
    ctx.claim(tutorial::observed(
                  "fault_in_other_process",
                  "a kernel reading another process's address faults with cudaErrorIllegalAddress",
                  kernel_faulted,
                  kernel_faulted ? "the kernel failed with cudaErrorIllegalAddress"
                                 : "the child " + child.describe() + ", not with that error",
                  "a kernel's access to memory its process never allocated is undefined "
                  "behaviour: no entry names the error it gets"),
              same_address ? "the child's own cudaMalloc returned the parent's address, so its "
                             "kernel read the child's own memory"
                           : "");
    // The entry of cudaErrorIllegalAddress: the process is left in an inconsistent state and any
    // further CUDA work will return the same error.
    ctx.claim(
        tutorial::documented(
            "sticky_after_fault",
            "after an illegal address the child's next CUDA call fails the same way",
            sticky, sticky ? "cudaFree returned cudaErrorIllegalAddress" : "cudaFree did not",
            "the driver recovered the context after the fault",
            tutorial::Entry{"Runtime API reference: cudaErrorIllegalAddress", "error", "will"}),
        kernel_faulted ? "" : "the kernel did not fault, so there was no error to keep");
    ctx.claim(tutorial::observed(
        "parent_unharmed",
        "the other process's fault leaves this one's context working: a kernel here reads the "
        "buffer intact",
        seen.here == cudaSuccess && seen.wrong == 0,
        tutorial::format("cudaDeviceSynchronize: %s; %zu of %zu values wrong",
                         cudaGetErrorName(seen.here), seen.wrong, count),
        "the reference says a fault leaves the faulting process unusable and nothing of other "
        "processes (under MPS one client's fault ends every client's work)"));
}

}  // namespace

tutorial::Result run_other_process(tutorial::Context& ctx) {
    const std::uint32_t seed = 7;
    std::uint32_t* buffer = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer, count * sizeof *buffer));
    fill_on_device(buffer, count, seed);
    std::printf(
        "This process allocated %p and filled it. It now starts a child process (fork +\n"
        "exec of this program) and writes that address to the child's stdin.\n\n",
        static_cast<void*>(buffer));

    const tutorial::ChildResult child = tutorial::run_child(
        "use_foreign_pointer", {std::to_string(ctx.device)},
        tutorial::format("%" PRIxPTR "\n", reinterpret_cast<std::uintptr_t>(buffer)));
    tutorial::print_child_output(child);
    std::printf("The child %s.\n\n", child.describe().c_str());

    // This process is unaffected: its context still works (a GPU reset after the fault would
    // have ended it too), and its buffer is intact.
    const cudaError_t here = cudaDeviceSynchronize();
    const std::size_t wrong =
        here == cudaSuccess ? mismatches_on_device(buffer, count, seed) : count;
    // Where this context was harmed (what parent_unharmed observes), the free answers as the
    // context does: shown, not checked.
    const cudaError_t freed = cudaFree(buffer);
    if (here != cudaSuccess || freed != cudaSuccess) {
        std::printf("Here: cudaDeviceSynchronize %s, cudaFree %s.\n", cudaGetErrorName(here),
                    cudaGetErrorName(freed));
    }
    std::printf(
        "Here the buffer afterwards: %zu wrong values. To share GPU memory with another\n"
        "process, export it with cudaIpcGetMemHandle or as a VMM file descriptor: chapter 07.\n",
        wrong);

    // Not CUDA memory there: the cudaPointerGetAttributes entry returns cudaErrorInvalidValue for
    // a pointer no context of the process allocated, mapped or registered, and (its note, from
    // CUDA 11.0) cudaMemoryTypeUnregistered with cudaSuccess for a host pointer it does not know.
    // Exactly those two answers count: the lesson zeroes the attributes before the call, and 0 is
    // cudaMemoryTypeUnregistered, so the type alone would also read "unregistered" after any other
    // error (cudaErrorInvalidDevice, ...). The child's line on the address, printed before its
    // kernel ran (which may end it).
    const bool refused_there =
        child.output.find("cudaPointerGetAttributes: cudaErrorInvalidValue, type ") !=
        std::string::npos;
    const bool unknown_there =
        refused_there ||
        child.output.find(
            "cudaPointerGetAttributes: cudaSuccess, type cudaMemoryTypeUnregistered") !=
            std::string::npos;
    const bool kernel_faulted =
        child.exited && child.exit_code == 3 &&
        child.output.find("returned cudaErrorIllegalAddress") != std::string::npos;
    const bool sticky =
        child.output.find("cudaFree, returned cudaErrorIllegalAddress") != std::string::npos;
    claim_what_was_seen(ctx, {child, here, wrong}, unknown_there, refused_there, kernel_faulted,
                        sticky);
    // Whether the kernel faulted is observed, so the verdict does not read it: where it did,
    // the claim sticky_after_fault judges the documented rest (a claim not held fails the
    // section), and where it did not, there is nothing to keep.
    return ctx.verdict(unknown_there,
                       kernel_faulted
                           ? "the child's CUDA did not know the address, and a fault there stayed "
                             "with its context; the fault itself and this process's intact "
                             "buffer are what this driver did"
                           : "the child's CUDA did not know the address; its kernel did not "
                             "fault there, which this driver chose");
}

TUTORIAL_SECTION(other_process, run_other_process);
TUTORIAL_CHILD(use_foreign_pointer, child_use_foreign_pointer);
