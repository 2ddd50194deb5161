// Section fork: CUDA and fork(). The Unified Memory appendix (N.2.5.2) calls a forked child's use
// of managed data undefined and a fork followed at once by exec safe. (checks/fork.cu runs each
// case in a child process; what a forked process's CUDA call does is this driver's behaviour.)
#include "common/check.hpp"

#include <sys/wait.h>
#include <unistd.h>

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

// (a) The mistake: fork (without exec) after this process has initialised CUDA. The forked copy
// does not get working CUDA state (what it gets is undefined); its first call's result is its exit
// code.
int fork_after_init(int* device) {
    const pid_t pid = fork();
    if (pid == 0) _exit(cudaMemset(device, 0, 4096));
    return wait_for(pid);
}

// (c2) The other order: fork before any CUDA call. No CUDA state exists yet to be inherited, and
// each process starts CUDA on its own (the reference does not speak of it; driver 580.159.04
// allows it).
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

}  // namespace
