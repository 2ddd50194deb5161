// Exercise ex07_share (chapter 07_ipc), the course's solution: the owner exports a legacy IPC
// handle; the worker opens it, runs its kernel on its own address of the memory, waits, and
// closes. The task is in ../share.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

__global__ void double_values(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] *= 2;
    }
}

cudaIpcMemHandle_t share(void* device_buffer) {
    cudaIpcMemHandle_t handle{};
    CUDA_CHECK(cudaIpcGetMemHandle(&handle, device_buffer));
    return handle;
}

void worker(const cudaIpcMemHandle_t& handle, std::size_t count) {
    void* pointer = nullptr;
    // The address differs from the owner's; the memory is the same.
    CUDA_CHECK(cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess));
    double_values<<<1024, 256>>>(static_cast<std::uint32_t*>(pointer), count);
    CUDA_CHECK(cudaGetLastError());
    // Done before the owner looks: the owner reads the buffer once this process has ended.
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaIpcCloseMemHandle(pointer));
}
