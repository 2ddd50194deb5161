// Section fork: CUDA and fork(). The Unified Memory appendix (N.2.5.2) calls a forked process's
// use of managed data undefined, and a fork followed at once by exec safe: the new program drops
// what it inherited, and the parent is again the only owner. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 03_managed/fork.cu common/standalone.cu -o build/fork
//   (or in 03_managed/: nvcc -std=c++17 -I.. fork.cu ../common/standalone.cu -o ../build/fork)
#include "common/check.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstring>

namespace {

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

// The mistake: fork (without exec) after this process has started CUDA. The forked copy does not
// get working CUDA state (what it gets is undefined); its first call's result is its exit code.
int fork_after_init(int* device) {
    const pid_t pid = fork();
    if (pid == 0) _exit(cudaMemset(device, 0, 4096));
    return wait_for(pid);
}

// The other order: fork before any CUDA call. No CUDA state exists yet to be inherited, and each
// process starts CUDA on its own (the reference does not speak of it).
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

// What the walkthrough found: how the exec'd program ended, and whether this process's managed
// memory still read back right after it.
struct Found {
    int exec_exit = -1;
    bool parent_ok = false;
};

// The safe pattern: this process holds managed memory, forks, and the child at once runs another
// program with exec (`program`: its path and arguments, as execv takes them).
Found walkthrough(int device, char* const program[]) {
    constexpr int n = 4096;
    Found found;
    // 1. This process uses CUDA: a kernel fills managed memory.
    CUDA_CHECK(cudaSetDevice(device));
    int* held = nullptr;
    CUDA_CHECK(cudaMallocManaged(&held, n * sizeof(int)));
    fill_value<<<4, 256>>>(held, n, 4);
    CUDA_CHECK_LAUNCH_SYNC();

    // 2. fork, and exec at once in the child: the new program drops all it inherited and starts
    //    CUDA afresh. Between the two, the child calls nothing else.
    std::fflush(stdout);  // or the child would write this process's buffered output again
    const pid_t pid = fork();
    if (pid == 0) {
        execv(program[0], program);
        _exit(127);  // exec failed
    }
    found.exec_exit = wait_for(pid);

    // 3. The parent is again the only owner of its managed memory: a kernel and the CPU use it.
    fill_value<<<4, 256>>>(held, n, 5);
    CUDA_CHECK_LAUNCH_SYNC();
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += held[i] != 5;
    found.parent_ok = wrong == 0;
    CUDA_CHECK(cudaFree(held));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
// ./fork runs the walkthrough (whose exec runs this program again as ./fork exec); ./fork mistake
// and ./fork before run the other two orders.
int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "";
    if (std::strcmp(what, "exec") == 0) return use_cuda(3) ? 0 : 3;
    if (std::strcmp(what, "mistake") == 0) {
        int* device = nullptr;
        CUDA_CHECK(cudaMalloc(&device, 4096));
        const int code = fork_after_init(device);
        std::printf("the forked copy's cudaMemset: %s\n",
                    cudaGetErrorName(static_cast<cudaError_t>(code)));
        CUDA_CHECK(cudaFree(device));
        return 0;
    }
    if (std::strcmp(what, "before") == 0) {
        int forked_exit = -1;
        const bool ok = fork_before_init(0, forked_exit);
        std::printf("fork before CUDA: this process %s, the forked one exited with code %d\n",
                    ok ? "used CUDA" : "FAILED", forked_exit);
        return ok && forked_exit == 0 ? 0 : 1;
    }
    char self[] = "/proc/self/exe";
    char exec_arg[] = "exec";
    char* const program[] = {self, exec_arg, nullptr};
    const Found found = walkthrough(0, program);
    std::printf(
        "fork + exec: the new program exited with code %d; this process's managed memory "
        "%s\n",
        found.exec_exit, found.parent_ok ? "read back right" : "read back WRONG");
    return found.exec_exit == 0 && found.parent_ok ? 0 : 1;
}
#endif
