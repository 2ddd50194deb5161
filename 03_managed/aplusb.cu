// Section aplusb: the source document's AplusB kernel, its result kept in three kinds of memory:
// device memory plus a copy, cudaMallocManaged, and a __managed__ global. (checks/aplusb.cu
// runs the three and compares them.)
#include "common/check.hpp"

namespace {

constexpr int count = 1000;
constexpr int a = 10;
constexpr int b = 100;

__global__ void AplusB(int* ret, int a, int b) {
    ret[threadIdx.x] = a + b + threadIdx.x;
}

// Step 1. Explicit: device memory, and a copy for the host. cudaMemcpy waits for the kernel
// before it copies (both are in the default stream), so no other wait is needed.
void aplusb_explicit(int* host_copy) {
    int* ret = nullptr;
    CUDA_CHECK(cudaMalloc(&ret, count * sizeof(int)));
    AplusB<<<1, count>>>(ret, a, b);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(host_copy, ret, count * sizeof(int), cudaMemcpyDefault));
    CUDA_CHECK(cudaFree(ret));
}

// Step 2. cudaMallocManaged: one pointer for both sides. Nothing copies, so nothing waits for the
// kernel either: the host must synchronize before it reads. The caller reads, then frees.
int* aplusb_managed() {
    int* ret = nullptr;
    CUDA_CHECK(cudaMallocManaged(&ret, count * sizeof(int)));
    AplusB<<<1, count>>>(ret, a, b);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    return ret;
}

// Step 3. A __managed__ global: the same, without even an allocation. Host and kernel name it.
__device__ __managed__ int ret_global[count];

__global__ void AplusB_global(int a, int b) {
    ret_global[threadIdx.x] = a + b + threadIdx.x;
}

void aplusb_global() {
    AplusB_global<<<1, count>>>(a, b);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
