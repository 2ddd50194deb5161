// Section system_allocator: a kernel on malloc, stack and global memory, which CUDA never
// allocated, and on cudaMallocManaged memory. (checks/system_allocator.cu runs each in a child.)
#include "common/check.hpp"

#include <cstring>

namespace {

constexpr int count = 1024;
int global_array[count];  // an ordinary C++ global, not __device__ or __managed__

// Step 1. Does this system promise kernels such memory? pageableMemoryAccess = 1 (HMM, hardware
// coherence) does (the Guide's N.1.6); at 0 nothing says what a kernel on it does.
int pageable_memory_access(int device) {
    int value = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrPageableMemoryAccess, device));
    return value;
}

__global__ void square_all(int* data, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        data[i] = i * i;
    }
}

// Step 2. Runs the kernel on `data` (malloc, the stack, global_array) and checks the result on
// the CPU. Returns the number of wrong values, or exits through CUDA_CHECK (code 1) if it fails.
int square_and_check(int* data) {
    std::memset(data, 0, count * sizeof(int));
    square_all<<<4, 256>>>(data, count);
    CUDA_CHECK_LAUNCH_SYNC();
    int wrong = 0;
    for (int i = 0; i < count; ++i) wrong += data[i] != i * i;
    return wrong;
}

// Step 3. The fix, valid in every kernel whatever pageableMemoryAccess says: memory from
// cudaMallocManaged (the Runtime API reference's cudaMallocManaged). The caller frees it.
int* managed_array() {
    int* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, count * sizeof(int)));
    return data;
}

}  // namespace
