// Exercise ex03_aplusb (chapter 03_managed): the chapter's first program, with managed memory.
//
// The given way to get a kernel's result is three steps: cudaMalloc a slot on the GPU, launch,
// cudaMemcpy the result back. With managed memory the slot is one pointer that both the CPU and
// the GPU use: no copy, no second variable. Rewrite the three functions so that the CPU reads the
// kernel's result straight from the slot (the `aplusb` section shows all three ways side by side).
//
// The check (exercises/check/aplusb.cu) passes when
//   - make_result_slot() returns managed memory,
//   - after add_on_gpu(a, b, slot), the CPU reads a + b from *slot for 5 pairs (a, b),
//   - free_result_slot() gives the memory back.
// Run it: cmake --build build --target ex03_aplusb && ./build/bin/ex03_aplusb
//    or:  ctest --preset exercise -R 03_managed
#include "common/check.hpp"

#include <cuda_runtime.h>

__global__ void aplusb(int a, int b, int* result) {
    *result = a + b;
}

int* make_result_slot() {
    int* slot = nullptr;
    // TODO 1: cudaMallocManaged(&slot, sizeof(int), cudaMemAttachGlobal) instead.
    CUDA_CHECK(cudaMalloc(&slot, sizeof(int)));
    return slot;
}

void add_on_gpu(int a, int b, int* slot) {
    aplusb<<<1, 1>>>(a, b, slot);
    CUDA_CHECK(cudaGetLastError());
    // TODO 2: the CPU may read *slot only once the kernel is done: cudaDeviceSynchronize().
}

void free_result_slot(int* slot) {
    CUDA_CHECK(cudaFree(slot));
}
