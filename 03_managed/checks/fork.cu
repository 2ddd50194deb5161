// Checks of section fork: runs ../fork.cu's mistake (a fork after CUDA started) in a child
// process, its walkthrough (a fork + exec while this process holds managed memory) here, and a
// fork before any CUDA call in another child, and reports what each did.
#include "03_managed/fork.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Child role: initialise CUDA, then fork_after_init. Exits 0 whatever the forked copy's call
// returned: nothing is promised about it, so the parent only reports it.
int child_fork_after_init(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    int* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, 4096));
    std::printf("this process initialised CUDA and allocated %p; now fork() without exec\n",
                static_cast<void*>(device));
    std::fflush(stdout);  // or the forked copy would write this line out a second time
    const int code = fork_after_init(device);
    std::printf("forked process: cudaMemset -> %s (its exit code, %d)\n",
                cudaGetErrorName(static_cast<cudaError_t>(code)), code);
    CUDA_CHECK(cudaFree(device));
    return 0;
}

// Child role: fork_before_init.
int child_fork_before_init(const std::vector<std::string>& args) {
    int forked_exit = -1;
    const bool ok = fork_before_init(std::atoi(args.at(0).c_str()), forked_exit);
    std::printf(
        "parent of the fork: its own kernel %s; the forked process's kernel %s (exit "
        "code %d)\n",
        ok ? "worked" : "gave wrong values", forked_exit == 0 ? "worked" : "failed", forked_exit);
    return ok && forked_exit == 0 ? 0 : 3;
}

// Child role: a process started by fork + exec (as run_child does) uses CUDA normally.
int child_use_cuda(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const bool ok = use_cuda(3);
    std::printf("exec'd process: a kernel on managed memory %s\n", ok ? "worked" : "FAILED");
    return ok ? 0 : 3;
}

namespace {

// (c1): the walkthrough, in this process: it holds managed memory while a child runs this same
// program by fork + exec (the child role use_cuda), and uses it afterwards, as N.2.5.2 says it
// may.
Found managed_across_fork_exec(int device) {
    char self[] = "/proc/self/exe";
    char flag[] = "--child";
    char role[] = "use_cuda";
    std::string device_arg = std::to_string(device);
    char* const program[] = {self, flag, role, device_arg.data(), nullptr};
    return walkthrough(device, program);
}

}  // namespace

tutorial::Result run_fork(tutorial::Context& ctx) {
    const std::vector<std::string> device = {std::to_string(ctx.device)};

    std::printf("(a) fork() after CUDA is initialised, no exec (inside a child process):\n");
    const tutorial::ChildResult after = tutorial::run_child("fork_after_init", device);
    tutorial::print_child_output(after);
    std::printf("    The child %s.\n", after.describe().c_str());
    const std::string forked_call = tutorial::child_answer(after, "forked process: cudaMemset");
    const std::string forked_error = forked_call.substr(0, forked_call.find(' '));

    std::printf(
        "\n(b) A forked process reading managed memory it inherited: undefined. The driver does\n"
        "    not manage the copied mappings, so the result may be the data, stale data or a\n"
        "    crash. Not run: nothing can be asserted about undefined behaviour.\n");

    std::printf(
        "\n(c1) fork + exec, which is how this program starts every child, while this\n"
        "     process holds managed memory:\n");
    const Found found = managed_across_fork_exec(ctx.device);
    const bool parent_ok = found.parent_ok;
    const std::string exec = found.exec_exit == 0 ? std::string("exited with code 0")
                             : found.exec_exit > 128
                                 ? tutorial::format("died with signal %d", found.exec_exit - 128)
                                 : tutorial::format("exited with code %d", found.exec_exit);
    std::printf(
        "    The exec'd child %s; afterwards this process's kernel and CPU %s its managed\n"
        "    memory.\n",
        exec.c_str(), parent_ok ? "used" : "could NOT use");

    std::printf("\n(c2) fork() before any CUDA call, then both processes use CUDA:\n");
    const tutorial::ChildResult before = tutorial::run_child("fork_before_init", device);
    tutorial::print_child_output(before);
    std::printf("    The child %s.\n\n", before.describe().c_str());

    ctx.claim(tutorial::observed(
        "forked_copy_refused",
        "a process forked after CUDA started cannot use the CUDA state it inherited",
        after.succeeded() && forked_error == "cudaErrorInitializationError",
        "its cudaMemset returned " + forked_error,
        "N.2.5.2 calls a forked child's use of managed data undefined, and no entry names an "
        "error for a CUDA call in a forked child"));
    const bool fork_exec = found.exec_exit == 0 && parent_ok;
    // N.2.5.2: a fork followed at once by exec "是安全的" (is safe), since the child drops the
    // handles and the parent is again their only owner.
    ctx.claim(tutorial::documented(
        "fork_exec_safe",
        "fork + exec is safe: the exec'd process uses CUDA afresh and the parent keeps its "
        "managed memory",
        fork_exec,
        "the exec'd child " + exec +
            (parent_ok ? "; the parent's memory intact" : "; the parent's memory WRONG"),
        "the exec'd program could not use CUDA, or the parent's managed memory changed",
        tutorial::Entry{"Programming Guide, N.2.5.2 Using fork() with Managed Memory",
                        "fork() exec()", "是安全的"}));
    ctx.claim(tutorial::observed(
        "fork_before_cuda", "a fork before any CUDA call leaves both processes free to use CUDA",
        before.succeeded(), "the child " + before.describe(),
        "N.2.5.2 speaks only of managed memory inherited through fork(); nothing in the "
        "reference covers a fork before CUDA starts"));
    // The parent's own managed memory, used before and after the child, is cudaMallocManaged's
    // promise, not fork's: the verdict rests on it.
    return ctx.verdict(parent_ok, tutorial::format("after a fork + exec the exec'd process used "
                                                   "CUDA (%s) and the parent's managed memory "
                                                   "was %s",
                                                   exec.c_str(), parent_ok ? "intact" : "WRONG"));
}

TUTORIAL_SECTION(fork, run_fork);
TUTORIAL_CHILD(fork_after_init, child_fork_after_init);
TUTORIAL_CHILD(fork_before_init, child_fork_before_init);
TUTORIAL_CHILD(use_cuda, child_use_cuda);
