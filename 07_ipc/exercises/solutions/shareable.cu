// Exercise ex07_shareable (chapter 07_ipc), the course's solution: cudaMalloc, the one allocator
// whose memory cudaIpcGetMemHandle exports. (Memory from a pool can be shared too, but through
// the pool's own calls: the `pool_ipc` section.) The task is in ../shareable.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>

void* allocate_shareable(std::size_t bytes) {
    void* buffer = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer, bytes));
    return buffer;
}

void free_shareable(void* buffer) {
    CUDA_CHECK(cudaFree(buffer));
}
