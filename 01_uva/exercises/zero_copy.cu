// Exercise ex01_zero_copy (chapter 01_uva): let a kernel write straight into host memory.
//
// With unified addressing, a pointer to pinned host memory is valid on the GPU as it is: a kernel
// can store through it over the bus, with no cudaMalloc and no cudaMemcpy (the
// `host_pointer_in_kernel` section of this chapter measures what that costs). Write the three
// functions below so that fill_from_gpu()'s kernel writes the values into the host buffer itself.
//
// The check (exercises/check/zero_copy.cu) passes when
//   - allocate_shared() returns host memory that CUDA knows as pinned,
//   - after fill_from_gpu(), the CPU reads value i * 3 + 1 at index i, with no copy in between,
//   - release_shared() gives the memory back (CUDA no longer knows the pointer).
// Run it: cmake --build build --target ex01_zero_copy && ./build/bin/ex01_zero_copy
//    or:  ctest --preset exercise -R 01_uva
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

__global__ void write_values(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = static_cast<std::uint32_t>(i * 3 + 1);
    }
}

std::uint32_t* allocate_shared(std::size_t count) {
    // TODO 1: allocate pinned host memory instead: cudaMallocHost, or cudaHostAlloc with
    //         cudaHostAllocMapped (the same thing where unified addressing is on).
    return new std::uint32_t[count];
}

void fill_from_gpu(std::uint32_t* data, std::size_t count) {
    // TODO 2: launch write_values on `data` itself (the host pointer), then wait for the kernel
    //         (cudaDeviceSynchronize) before returning: the CPU reads the values right after.
    for (std::size_t i = 0; i < count; ++i) data[i] = 0;
}

void release_shared(std::uint32_t* data) {
    // TODO 3: give pinned memory back with the call that matches its allocation (cudaFreeHost).
    delete[] data;
}
