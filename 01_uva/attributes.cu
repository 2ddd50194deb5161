// Section attributes: under unified addressing an address alone tells CUDA what it points to.
// One buffer of every kind a program can point to, each asked about with cudaPointerGetAttributes
// (checks/attributes.cu compares every answer with what the Runtime API reference promises).
#include "common/check.hpp"

#include <cstdint>
#include <cstdlib>

namespace {

// Step 1. One address space for the host and every GPU? 1 on every 64-bit Linux system.
int unified_addressing(int device) {
    int uva = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&uva, cudaDevAttrUnifiedAddressing, device));
    return uva;
}

// Step 2. One of every kind of memory a program can hold a pointer to.
__device__ __managed__ int managed_global[256];

struct Allocations {
    static constexpr std::size_t bytes = 64 * 1024;
    void* device = nullptr;
    void* malloc_host = nullptr;
    void* host_default = nullptr;
    void* host_portable = nullptr;
    void* host_mapped = nullptr;
    void* host_write_combined = nullptr;
    void* managed = nullptr;
    void* registered = std::malloc(bytes);
    void* plain_malloc = std::malloc(bytes);
    std::uint32_t* plain_new = new std::uint32_t[bytes / sizeof(std::uint32_t)];

    Allocations() {
        CUDA_CHECK(cudaMalloc(&device, bytes));
        CUDA_CHECK(cudaMallocHost(&malloc_host, bytes));
        CUDA_CHECK(cudaHostAlloc(&host_default, bytes, cudaHostAllocDefault));
        CUDA_CHECK(cudaHostAlloc(&host_portable, bytes, cudaHostAllocPortable));
        CUDA_CHECK(cudaHostAlloc(&host_mapped, bytes, cudaHostAllocMapped));
        CUDA_CHECK(cudaHostAlloc(&host_write_combined, bytes, cudaHostAllocWriteCombined));
        CUDA_CHECK(cudaMallocManaged(&managed, bytes));
        CUDA_CHECK(cudaHostRegister(registered, bytes, cudaHostRegisterDefault));
    }
    ~Allocations() {
        CUDA_CHECK(cudaHostUnregister(registered));
        std::free(registered);
        std::free(plain_malloc);
        delete[] plain_new;
        CUDA_CHECK(cudaFree(managed));
        CUDA_CHECK(cudaFreeHost(host_write_combined));
        CUDA_CHECK(cudaFreeHost(host_mapped));
        CUDA_CHECK(cudaFreeHost(host_portable));
        CUDA_CHECK(cudaFreeHost(host_default));
        CUDA_CHECK(cudaFreeHost(malloc_host));
        CUDA_CHECK(cudaFree(device));
    }
    Allocations(const Allocations&) = delete;
    Allocations& operator=(const Allocations&) = delete;
};

// Step 3. The question of this section: from nothing but the address, what does CUDA know? The
// answer's type, device, devicePointer and hostPointer; no error for memory CUDA never saw.
cudaError_t ask(const void* pointer, cudaPointerAttributes* attributes) {
    return cudaPointerGetAttributes(attributes, pointer);
}

}  // namespace
