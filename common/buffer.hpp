// A buffer of any kind of memory the course compares, allocated with the call that kind needs and
// freed with the matching one when the Buffer goes out of scope:
//
//   kind            allocated with                          freed with
//   pageable        malloc                                  free
//   pinned          cudaMallocHost                          cudaFreeHost
//   write_combined  cudaHostAlloc(cudaHostAllocWriteCombined) cudaFreeHost
//   registered      malloc, then cudaHostRegister           cudaHostUnregister, then free
//   device          cudaMalloc                              cudaFree
//   managed         cudaMallocManaged                       cudaFree
//
// Mixing up the pairs is a classic mistake (chapter 02's `misuse` section shows what each mix-up
// does); tying the pair to the kind makes it impossible here.
#pragma once

#include <cstddef>

namespace tutorial {

enum class MemoryKind { pageable, pinned, write_combined, registered, device, managed };

const char* kind_name(MemoryKind kind);  // "pageable", "pinned", "write-combined", ...

class Buffer {
public:
    Buffer(MemoryKind kind, std::size_t bytes);
    ~Buffer();
    Buffer(Buffer&& other) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer& operator=(Buffer&&) = delete;

    MemoryKind kind() const { return kind_; }
    std::size_t bytes() const { return bytes_; }
    void* get() const { return data_; }
    template <typename T>
    T* as() const {
        return static_cast<T*>(data_);
    }
    // Only device memory is out of the CPU's reach; every other kind can be read on the host.
    bool host_accessible() const { return kind_ != MemoryKind::device; }

private:
    MemoryKind kind_;
    std::size_t bytes_;
    void* data_ = nullptr;
};

}  // namespace tutorial
