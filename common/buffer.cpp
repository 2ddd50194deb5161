#include "common/buffer.hpp"

#include "common/check.hpp"

#include <cstdio>
#include <cstdlib>

namespace tutorial {

const char* kind_name(MemoryKind kind) {
    switch (kind) {
        case MemoryKind::pageable: return "pageable";
        case MemoryKind::pinned: return "pinned";
        case MemoryKind::write_combined: return "write-combined";
        case MemoryKind::registered: return "registered";
        case MemoryKind::device: return "device";
        case MemoryKind::managed: return "managed";
    }
    return "?";
}

Buffer::Buffer(MemoryKind kind, std::size_t bytes) : kind_(kind), bytes_(bytes) {
    switch (kind) {
        case MemoryKind::pageable:
        case MemoryKind::registered:
            data_ = std::malloc(bytes);
            if (data_ == nullptr) {
                std::fprintf(stderr, "malloc of %zu bytes failed\n", bytes);
                std::exit(1);
            }
            if (kind == MemoryKind::registered) {
                CUDA_CHECK(cudaHostRegister(data_, bytes, cudaHostRegisterDefault));
            }
            break;
        case MemoryKind::pinned: CUDA_CHECK(cudaMallocHost(&data_, bytes)); break;
        case MemoryKind::write_combined:
            CUDA_CHECK(cudaHostAlloc(&data_, bytes, cudaHostAllocWriteCombined));
            break;
        case MemoryKind::device: CUDA_CHECK(cudaMalloc(&data_, bytes)); break;
        case MemoryKind::managed: CUDA_CHECK(cudaMallocManaged(&data_, bytes)); break;
    }
}

Buffer::Buffer(Buffer&& other) noexcept
    : kind_(other.kind_), bytes_(other.bytes_), data_(other.data_) {
    other.data_ = nullptr;
}

Buffer::~Buffer() {
    if (data_ == nullptr) return;
    switch (kind_) {
        case MemoryKind::pageable: std::free(data_); break;
        case MemoryKind::registered:
            CUDA_CHECK(cudaHostUnregister(data_));
            std::free(data_);
            break;
        case MemoryKind::pinned:
        case MemoryKind::write_combined: CUDA_CHECK(cudaFreeHost(data_)); break;
        case MemoryKind::device:
        case MemoryKind::managed: CUDA_CHECK(cudaFree(data_)); break;
    }
}

}  // namespace tutorial
