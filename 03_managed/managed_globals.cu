// Section managed_globals: the Unified Memory appendix's __device__ __managed__ variables: the
// host's first touch of one creates the context (N.2.3), host and kernel use them by name
// (N.2.1.2), and a kernel prints what the host stored (N.2.3). Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 03_managed/managed_globals.cu common/standalone.cu -o build/managed_globals
//   (or in 03_managed/: nvcc -std=c++17 -I.. managed_globals.cu ../common/standalone.cu
//       -o ../build/managed_globals)  (on the same line)
#include "common/check.hpp"
#include "common/device.hpp"

#include <cstdio>
#include <string>

namespace {

__device__ __managed__ int x[2];
__device__ __managed__ int y;
__device__ __managed__ int value;

__global__ void add() {
    x[1] = x[0] + y;
}

__global__ void show() {
    printf("GPU sees: value = %d\n", value);  // its output
}

// The host's first touch of y: a read, a write, or taking its address (`how`). The variable lives
// in the current device's context, so the host's first access has to create that context.
void host_touches_y(const std::string& how) {
    if (how == "read") {
        const volatile int seen = y;
        (void)seen;
    } else if (how == "write") {
        y = 42;
    } else {
        int* volatile address = &y;
        (void)address;
    }
}

// What the walkthrough found: device 0's primary context before and after the host's first
// touch (true: it exists), and x[1] as the host reads it after the kernel.
struct Found {
    bool context_before = false;
    bool context_after = false;
    int result = 0;
};

// In a process that has not used CUDA yet: `first_touch` is how the host touches y first.
Found walkthrough(const std::string& first_touch) {
    Found found;
    // 1. The process's first CUDA act: the host touches y. Around it, whether device 0 (the
    //    current device) has its primary context; asking creates none.
    found.context_before = tutorial::primary_context_active(0);
    host_touches_y(first_touch);
    found.context_after = tutorial::primary_context_active(0);

    // 2. N.2.1.2: host and kernel use the variables by name: no pointer, no allocation, no copy.
    //    As with cudaMallocManaged memory, the host waits for the kernel before it reads.
    x[0] = 3;
    y = 5;
    add<<<1, 1>>>();
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    found.result = x[1];

    // 3. N.2.3: the host stores a value; the kernel prints what it sees.
    value = 1234;
    show<<<1, 1>>>();
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const Found found = walkthrough("read");
    std::printf("device 0's context before the host read y: %s, after: %s\n",
                found.context_before ? "active" : "inactive",
                found.context_after ? "active" : "inactive");
    std::printf("result = %d (expected 8)\n", found.result);
    return found.result == 8 ? 0 : 1;
}
#endif
