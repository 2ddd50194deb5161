// Section managed_globals: the Unified Memory appendix's __device__ __managed__ example (N.2.1.2),
// then the host's first touch of such a variable, which needs a context (N.2.3). (The checks,
// checks/managed_globals.cu, run each touch in a fresh process and watch the context.)
#include "common/check.hpp"

#include <string>

namespace {

__device__ __managed__ int x[2];
__device__ __managed__ int y;

__global__ void add() {
    x[1] = x[0] + y;
}

// Step 1. Host and kernel use the variables by name: no pointer, no allocation, no copy. As with
// cudaMallocManaged memory, the host waits for the kernel before it reads the result.
int add_with_managed_globals() {
    x[0] = 3;
    y = 5;
    add<<<1, 1>>>();
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    return x[1];
}

// Step 2. The host's first touch of y in a process that has not used CUDA yet: a read, a write,
// or taking its address (`how`). The variable lives in the current device's context, so the
// host's first access has to create that context (N.2.3) before it can reach y.
void host_touches_y(const std::string& how) {
    if (how == "read") {
        const volatile int value = y;
        (void)value;
    } else if (how == "write") {
        y = 42;
    } else {
        int* volatile address = &y;
        (void)address;
    }
}

}  // namespace
