// Section aplusb: the Unified Memory appendix's AplusB (N.1.2), its result kept three ways:
// device memory plus a copy, cudaMallocManaged, and a __managed__ global. Alone:
//   nvcc -std=c++17 -I. 03_managed/aplusb.cu common/standalone.cu -o build/aplusb
//   (or in 03_managed/: nvcc -std=c++17 -I.. aplusb.cu ../common/standalone.cu -o ../build/aplusb)
#include "common/check.hpp"

#include <cstdio>
#include <vector>

namespace {

constexpr int count = 1000;
constexpr int a = 10;
constexpr int b = 100;

__global__ void AplusB(int* ret, int a, int b) {
    ret[threadIdx.x] = a + b + threadIdx.x;
}

// Way 1. Explicit: device memory, and a copy for the host. cudaMemcpy waits for the kernel
// before it copies (both are in the default stream), so no other wait is needed.
std::vector<int> aplusb_explicit() {
    std::vector<int> host_ret(count);
    int* ret = nullptr;
    CUDA_CHECK(cudaMalloc(&ret, count * sizeof(int)));
    AplusB<<<1, count>>>(ret, a, b);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(host_ret.data(), ret, count * sizeof(int), cudaMemcpyDefault));
    CUDA_CHECK(cudaFree(ret));
    return host_ret;
}

// Way 2. cudaMallocManaged: one pointer for both sides. Nothing copies, so nothing waits for the
// kernel either: the host must synchronize before it reads ret itself.
std::vector<int> aplusb_managed() {
    int* ret = nullptr;
    CUDA_CHECK(cudaMallocManaged(&ret, count * sizeof(int)));
    AplusB<<<1, count>>>(ret, a, b);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<int> read(ret, ret + count);  // the host reads the managed memory
    CUDA_CHECK(cudaFree(ret));
    return read;
}

// Way 3. A __managed__ global: the same, without even an allocation. Host and kernel name it.
__device__ __managed__ int ret_global[count];

__global__ void AplusB_global(int a, int b) {
    ret_global[threadIdx.x] = a + b + threadIdx.x;
}

std::vector<int> aplusb_global() {
    AplusB_global<<<1, count>>>(a, b);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());  // as for way 2: no copy waits for the kernel
    return std::vector<int>(ret_global, ret_global + count);
}

// What the host read back, each way.
struct Found {
    std::vector<int> explicit_copy, managed, global;
};

// The three ways, one after the other.
Found walkthrough() {
    Found found;
    found.explicit_copy = aplusb_explicit();
    found.managed = aplusb_managed();
    found.global = aplusb_global();
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const Found found = walkthrough();
    int wrong = 0;
    for (int i = 0; i < count; ++i) {
        const int want = a + b + i;
        wrong += (found.explicit_copy[i] != want) + (found.managed[i] != want) +
                 (found.global[i] != want);
    }
    for (int i = 0; i < 3; ++i)
        std::printf("%d: A+B = %d, %d, %d\n", i, found.explicit_copy[i], found.managed[i],
                    found.global[i]);
    std::printf("...\n%d of %d values wrong (explicit copy, cudaMallocManaged, __managed__)\n",
                wrong, 3 * count);
    return wrong == 0 ? 0 : 1;
}
#endif
