// Exercise ex01_zero_copy (chapter 01_uva), the course's solution: pinned host memory, a kernel
// that stores through the host pointer itself, and the matching free. The task is in
// ../zero_copy.cu.
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
    std::uint32_t* data = nullptr;
    // Mapped is what lets the GPU reach the pages; with unified addressing every pinned
    // allocation is mapped, and the device pointer equals the host pointer.
    CUDA_CHECK(cudaHostAlloc(&data, count * sizeof(std::uint32_t), cudaHostAllocMapped));
    return data;
}

void fill_from_gpu(std::uint32_t* data, std::size_t count) {
    write_values<<<256, 256>>>(data, count);
    CUDA_CHECK(cudaGetLastError());
    // The stores cross the bus as the kernel runs; the CPU may read once the kernel is done.
    CUDA_CHECK(cudaDeviceSynchronize());
}

void release_shared(std::uint32_t* data) {
    CUDA_CHECK(cudaFreeHost(data));
}
