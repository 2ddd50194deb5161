// Section `fork` (fault demo): CUDA and fork(). A forked child cannot use the CUDA state it
// inherited; a child that execs, or a fork that happens before CUDA starts, is fine.
#include "common/check.hpp"
#include "common/child.hpp"
#include "common/report.hpp"
#include "sections.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// lesson:begin
__global__ void fill_value(int* data, int n, int value) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        data[i] = value;
    }
}

// A kernel fills managed memory and the CPU checks it: true if every value arrived.
bool use_cuda(int value) {
    constexpr int n = 4096;
    int* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, n * sizeof(int)));
    fill_value<<<4, 256>>>(data, n, value);
    CUDA_CHECK_LAUNCH_SYNC();
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += data[i] != value;
    CUDA_CHECK(cudaFree(data));
    return wrong == 0;
}

// Waits for a forked process; its exit code, or 128 + signal.
int wait_for(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The mistake: fork (without exec) after this process has initialised CUDA. The forked copy
// inherits none of CUDA's state; its first call reports what it returned as its exit code.
int fork_after_init(int* device) {
    const pid_t pid = fork();
    if (pid == 0) _exit(cudaMemset(device, 0, 4096));
    return wait_for(pid);
}

// The safe order: fork before any CUDA call; each process then starts CUDA on its own.
bool fork_before_init(int device, int& forked_exit) {
    const pid_t pid = fork();
    if (pid == 0) {
        CUDA_CHECK(cudaSetDevice(device));
        _exit(use_cuda(2) ? 0 : 3);
    }
    CUDA_CHECK(cudaSetDevice(device));
    const bool ok = use_cuda(1);
    forked_exit = wait_for(pid);
    return ok;
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

}  // namespace

// Child role: initialise CUDA, then fork_after_init.
int child_fork_after_init(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    int* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, 4096));
    std::printf("this process initialised CUDA and allocated %p; now fork() without exec\n",
                static_cast<void*>(device));
    std::fflush(stdout);  // or the forked copy would write this line out a second time
    const int code = fork_after_init(device);
    std::printf("forked process: cudaMemset returned %s (its exit code, %d)\n",
                cudaGetErrorName(static_cast<cudaError_t>(code)), code);
    CUDA_CHECK(cudaFree(device));
    return code == cudaErrorInitializationError ? 0 : 3;
}

// Child role: fork_before_init.
int child_fork_before_init(const std::vector<std::string>& args) {
    int forked_exit = -1;
    const bool ok = fork_before_init(std::atoi(args.at(0).c_str()), forked_exit);
    std::printf("parent of the fork: its own kernel %s; the forked process's kernel %s (exit "
                "code %d)\n",
                ok ? "worked" : "gave wrong values", forked_exit == 0 ? "worked" : "failed",
                forked_exit);
    return ok && forked_exit == 0 ? 0 : 3;
}

// Child role: a process started by fork + exec (as run_child does) uses CUDA normally.
int child_use_cuda(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const bool ok = use_cuda(3);
    std::printf("exec'd process: a kernel on managed memory %s\n", ok ? "worked" : "FAILED");
    return ok ? 0 : 3;
}

tutorial::Result run_fork(tutorial::Context& ctx) {
    const std::vector<std::string> device = {std::to_string(ctx.device)};

    std::printf("(a) fork() after CUDA is initialised, no exec (inside a child process):\n");
    const tutorial::ChildResult after = tutorial::run_child("fork_after_init", device);
    tutorial::print_child_output(after);
    std::printf("    The child %s.\n", after.describe().c_str());
    const bool refused =
        after.succeeded() && after.output.find("cudaErrorInitializationError") != std::string::npos;

    std::printf(
        "\n(b) A forked process reading managed memory it inherited: undefined. The driver does\n"
        "    not manage the copied mappings, so the result may be the data, stale data or a\n"
        "    crash. Not run: nothing can be asserted about undefined behaviour.\n");

    std::printf("\n(c1) fork + exec, which is how this program starts every child:\n");
    const tutorial::ChildResult exec = tutorial::run_child("use_cuda", device);
    tutorial::print_child_output(exec);
    std::printf("    The child %s.\n", exec.describe().c_str());

    std::printf("\n(c2) fork() before any CUDA call, then both processes use CUDA:\n");
    const tutorial::ChildResult before = tutorial::run_child("fork_before_init", device);
    tutorial::print_child_output(before);
    std::printf("    The child %s.\n\n", before.describe().c_str());

    ctx.claim(tutorial::observed(
        "a process forked after CUDA started cannot use the CUDA state it inherited", refused,
        refused ? "its cudaMemset returned cudaErrorInitializationError"
                : "its cudaMemset did not fail that way",
        "this driver let the forked process through; the child's lines say what it returned"));
    ctx.claim(tutorial::observed("fork + exec gives a fresh process that uses CUDA normally",
                                 exec.succeeded(), "the exec'd child " + exec.describe(),
                                 "the device is busy or unavailable to a second process"));
    ctx.claim(tutorial::observed(
        "a fork before any CUDA call leaves both processes free to use CUDA", before.succeeded(),
        "the child " + before.describe(),
        "the device is in exclusive-process compute mode, which allows one process at a time"));
    const int as_documented = refused + exec.succeeded() + before.succeeded();
    return ctx.verdict(as_documented == 3,
                       tutorial::format("%d of 3: the CUDA call after fork() failed with "
                                        "cudaErrorInitializationError, and the exec'd and "
                                        "forked-before-CUDA processes used CUDA correctly",
                                        as_documented));
}
