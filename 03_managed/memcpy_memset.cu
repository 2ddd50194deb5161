// Section memcpy_memset: cudaMemcpy and cudaMemset on managed memory (the Unified Memory appendix,
// N.2.2.7). (checks/memcpy_memset.cu copies under every kind in child processes and counts where
// the pages end up with the driver's Unified Memory counters.)
#include "common/check.hpp"

#include <cstddef>
#include <cstdint>

namespace {

// The managed buffer is the destination of a copy, its source, or set by cudaMemset.
enum class Operation { copy_into, copy_from, memset };

// Step 1. cudaMemcpy and cudaMemset take managed pointers under any kind: for the managed side the
// kind only says whether the runtime reaches it from the CPU or from the GPU (the Unified Memory
// appendix, N.2.2.7). The kind must still name the other buffer as the memory it is.
void operate(Operation operation, std::uint32_t* managed, std::uint32_t* pinned, std::size_t bytes,
             cudaMemcpyKind kind) {
    switch (operation) {
        case Operation::copy_into: CUDA_CHECK(cudaMemcpy(managed, pinned, bytes, kind)); break;
        case Operation::copy_from: CUDA_CHECK(cudaMemcpy(pinned, managed, bytes, kind)); break;
        case Operation::memset: CUDA_CHECK(cudaMemset(managed, 0, bytes)); break;
    }
    CUDA_CHECK(cudaDeviceSynchronize());
}

// Step 2. cudaMemset and cudaMemsetAsync on managed memory the CPU wrote first: the first half
// 0xab, the second 0xcd. Both may return before they are done, so the host synchronizes before it
// reads (N.2.2.7 asks for that). The caller reads the bytes, then frees them with cudaFree.
std::uint8_t* memsets_on_cpu_touched(std::size_t bytes) {
    std::uint8_t* p = nullptr;
    CUDA_CHECK(cudaMallocManaged(&p, bytes));
    for (std::size_t i = 0; i < bytes; ++i) p[i] = 0x11;
    CUDA_CHECK(cudaMemset(p, 0xab, bytes / 2));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMemsetAsync(p + bytes / 2, 0xcd, bytes / 2, stream));
    CUDA_CHECK(cudaDeviceSynchronize());  // both: the default stream's memset and `stream`'s
    CUDA_CHECK(cudaStreamDestroy(stream));
    return p;
}

}  // namespace
