// Section system_allocator: a kernel on malloc, stack and global memory, which CUDA never
// allocated, where pageableMemoryAccess promises it, and on cudaMallocManaged memory, which every
// kernel may use. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 03_managed/system_allocator.cu common/standalone.cu
//       -o build/system_allocator  (on the same line)
//   (or in 03_managed/: nvcc -std=c++17 -I.. system_allocator.cu ../common/standalone.cu
//       -o ../build/system_allocator)  (on the same line)
#include "common/check.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int count = 1024;
int global_array[count];  // an ordinary C++ global, not __device__ or __managed__

__global__ void square_all(int* data, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        data[i] = i * i;
    }
}

// Runs the kernel on `data` and checks the result on the CPU: the number of wrong values. Where
// the GPU cannot reach `data`, the kernel stops with an error and CUDA_CHECK ends the program.
int square_and_check(int* data) {
    std::memset(data, 0, count * sizeof(int));
    square_all<<<4, 256>>>(data, count);
    CUDA_CHECK_LAUNCH_SYNC();
    int wrong = 0;
    for (int i = 0; i < count; ++i) wrong += data[i] != i * i;
    return wrong;
}

// What the walkthrough found: the attribute, and the wrong values on each kind of memory it
// tried (-1: not tried).
struct Found {
    int pageable_memory_access = 0;
    int on_malloc = -1, on_stack = -1, on_global = -1, on_managed = -1;
};

Found walkthrough(int device) {
    Found found;
    // 1. Does this system promise kernels memory CUDA never allocated? pageableMemoryAccess = 1
    //    (HMM, hardware coherence) does; at 0 nothing says what a kernel on it does.
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaDeviceGetAttribute(&found.pageable_memory_access,
                                      cudaDevAttrPageableMemoryAccess, device));
    // 2. Where it is promised: malloc, the stack and a plain global, as the CPU has them.
    if (found.pageable_memory_access) {
        int* heap = static_cast<int*>(std::malloc(count * sizeof(int)));
        found.on_malloc = square_and_check(heap);
        std::free(heap);
        int stack_array[count];
        found.on_stack = square_and_check(stack_array);
        found.on_global = square_and_check(global_array);
    }
    // 3. The fix, valid in every kernel whatever pageableMemoryAccess says: memory from
    //    cudaMallocManaged.
    int* managed = nullptr;
    CUDA_CHECK(cudaMallocManaged(&managed, count * sizeof(int)));
    found.on_managed = square_and_check(managed);
    CUDA_CHECK(cudaFree(managed));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const Found f = walkthrough(0);
    std::printf("pageableMemoryAccess = %d\n", f.pageable_memory_access);
    if (f.pageable_memory_access) {
        std::printf("wrong values on malloc %d, stack %d, global %d memory\n", f.on_malloc,
                    f.on_stack, f.on_global);
    }
    std::printf("wrong values on cudaMallocManaged memory: %d\n", f.on_managed);
    return f.on_managed == 0 ? 0 : 1;
}
#endif
