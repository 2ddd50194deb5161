// Exercise ex03_aplusb (chapter 03_managed), the course's solution: one managed slot that the
// kernel writes and the CPU reads, with a synchronization between them. The task is in
// ../aplusb.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

__global__ void aplusb(int a, int b, int* result) {
    *result = a + b;
}

int* make_result_slot() {
    int* slot = nullptr;
    CUDA_CHECK(cudaMallocManaged(&slot, sizeof(int), cudaMemAttachGlobal));
    return slot;
}

void add_on_gpu(int a, int b, int* slot) {
    aplusb<<<1, 1>>>(a, b, slot);
    CUDA_CHECK(cudaGetLastError());
    // Without it the CPU could read the slot before the kernel has written it.
    CUDA_CHECK(cudaDeviceSynchronize());
}

void free_result_slot(int* slot) {
    CUDA_CHECK(cudaFree(slot));  // managed memory is freed like device memory
}
