// Section first_touch: cudaMallocManaged reserves addresses, not memory. Pages appear where the
// data is first touched: device memory for a kernel, host memory for the CPU. (checks/
// first_touch.cu prints the steps and counts what the driver moved.)
#include "common/check.hpp"

#include <cstdint>
#include <cstring>

namespace {

// Free device memory (cudaMemGetInfo) at the start and after each step.
struct FreeMemory {
    std::size_t start, managed, gpu_touch, managed_2, cpu_touch, cuda_malloc, freed;
};

std::size_t free_device_memory() {
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    return free_bytes;
}

__global__ void touch(std::uint8_t* data, std::size_t bytes) {
    // One write per 4 KiB is enough to make every page exist.
    for (std::size_t i = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) * 4096;
         i < bytes; i += static_cast<std::size_t>(gridDim.x) * blockDim.x * 4096) {
        data[i] = 1;
    }
}

// Managed memory takes room when it is first touched, a page at a time, on the CPU or the GPU
// (N.2.1.1); cudaMalloc's memory is there when the call returns.
FreeMemory first_touch(std::size_t bytes) {
    FreeMemory f{};
    f.start = free_device_memory();
    std::uint8_t* gpu_touched = nullptr;
    CUDA_CHECK(cudaMallocManaged(&gpu_touched, bytes));
    f.managed = free_device_memory();
    touch<<<256, 256>>>(gpu_touched, bytes);  // first touched by the GPU
    CUDA_CHECK_LAUNCH_SYNC();
    f.gpu_touch = free_device_memory();
    std::uint8_t* cpu_touched = nullptr;
    CUDA_CHECK(cudaMallocManaged(&cpu_touched, bytes));
    f.managed_2 = free_device_memory();
    std::memset(cpu_touched, 1, bytes);  // first touched by the CPU
    f.cpu_touch = free_device_memory();
    std::uint8_t* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    f.cuda_malloc = free_device_memory();
    CUDA_CHECK(cudaFree(device));
    CUDA_CHECK(cudaFree(cpu_touched));
    CUDA_CHECK(cudaFree(gpu_touched));
    f.freed = free_device_memory();
    return f;
}

}  // namespace
