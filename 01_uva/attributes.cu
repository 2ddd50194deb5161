// Section attributes: under unified addressing an address alone tells CUDA what it points to.
// One buffer of every kind a program can point to, each asked about with cudaPointerGetAttributes.
// Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 01_uva/attributes.cu common/standalone.cu -o build/attributes
//   (or in 01_uva/: nvcc -std=c++17 -I.. attributes.cu ../common/standalone.cu
//       -o ../build/attributes)  (on the same line)
#include "common/check.hpp"

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace {

// Managed memory the program declares rather than allocates.
__device__ __managed__ int managed_global[256];

// One answer of cudaPointerGetAttributes, and which allocation it was asked about.
struct Answer {
    const char* allocation;
    const void* pointer;
    cudaError_t status;  // no CUDA_CHECK: for memory CUDA never saw, what it returns is the lesson
    cudaPointerAttributes attributes;
};

// What the walkthrough found.
struct Found {
    int unified_addressing = 0;   // 1: one address space for the host and every GPU
    std::vector<Answer> answers;  // one per allocation, in the order made
    // The two exceptions that have a device address of their own: their host pointers, and what
    // cudaHostGetDevicePointer returned for them.
    const void* write_combined = nullptr;
    const void* write_combined_on_device = nullptr;
    const void* registered = nullptr;
    const void* registered_on_device = nullptr;
};

Found walkthrough(int device) {
    constexpr std::size_t bytes = 64 * 1024;
    Found found;
    // 1. One address space for the host and every GPU? 1 on every 64-bit Linux system.
    CUDA_CHECK(
        cudaDeviceGetAttribute(&found.unified_addressing, cudaDevAttrUnifiedAddressing, device));

    // 2. One of every kind of memory a program can hold a pointer to.
    void *on_device = nullptr, *malloc_host = nullptr, *host_default = nullptr;
    void *host_portable = nullptr, *host_mapped = nullptr, *write_combined = nullptr;
    void* managed = nullptr;
    CUDA_CHECK(cudaMalloc(&on_device, bytes));
    CUDA_CHECK(cudaMallocHost(&malloc_host, bytes));
    CUDA_CHECK(cudaHostAlloc(&host_default, bytes, cudaHostAllocDefault));
    CUDA_CHECK(cudaHostAlloc(&host_portable, bytes, cudaHostAllocPortable));
    CUDA_CHECK(cudaHostAlloc(&host_mapped, bytes, cudaHostAllocMapped));
    CUDA_CHECK(cudaHostAlloc(&write_combined, bytes, cudaHostAllocWriteCombined));
    CUDA_CHECK(cudaMallocManaged(&managed, bytes));
    void* registered = std::malloc(bytes);
    CUDA_CHECK(cudaHostRegister(registered, bytes, cudaHostRegisterDefault));
    void* plain_malloc = std::malloc(bytes);
    std::uint32_t* plain_new = new std::uint32_t[bytes / sizeof(std::uint32_t)];
    int on_the_stack[16] = {};

    // 3. The question of this section: from nothing but the address, what does CUDA know? The
    //    memory's type, its device, the pointers through which device and host reach it.
    const auto ask = [&](const char* allocation, const void* pointer) {
        Answer answer{allocation, pointer, cudaSuccess, {}};
        answer.status = cudaPointerGetAttributes(&answer.attributes, pointer);
        found.answers.push_back(answer);
    };
    ask("cudaMalloc", on_device);
    ask("cudaMallocHost", malloc_host);
    ask("cudaHostAlloc(Default)", host_default);
    ask("cudaHostAlloc(Portable)", host_portable);
    ask("cudaHostAlloc(Mapped)", host_mapped);
    ask("cudaHostAlloc(WriteCombined)", write_combined);
    ask("malloc + cudaHostRegister", registered);
    ask("cudaMallocManaged", managed);
    ask("__managed__ variable", managed_global);
    ask("malloc", plain_malloc);
    ask("new[]", plain_new);
    ask("stack array", on_the_stack);

    // 4. Write-combined and registered memory may have a device address of their own: a kernel
    //    is given what cudaHostGetDevicePointer returns for them.
    void* on_device_view = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&on_device_view, write_combined, 0));
    found.write_combined = write_combined;
    found.write_combined_on_device = on_device_view;
    CUDA_CHECK(cudaHostGetDevicePointer(&on_device_view, registered, 0));
    found.registered = registered;
    found.registered_on_device = on_device_view;

    // 5. Each freed with the call that matches its allocation.
    CUDA_CHECK(cudaHostUnregister(registered));
    std::free(registered);
    std::free(plain_malloc);
    delete[] plain_new;
    CUDA_CHECK(cudaFree(managed));
    for (void* pinned : {malloc_host, host_default, host_portable, host_mapped, write_combined})
        CUDA_CHECK(cudaFreeHost(pinned));
    CUDA_CHECK(cudaFree(on_device));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>

#include "common/device.hpp"

int main() {
    const Found found = walkthrough(0);
    std::printf("unifiedAddressing = %d\n", found.unified_addressing);
    for (const Answer& a : found.answers) {
        std::printf("%-30s %p  %s  %-28s device %2d  devicePointer %p  hostPointer %p\n",
                    a.allocation, a.pointer, cudaGetErrorName(a.status),
                    tutorial::memory_type_name(a.attributes.type).c_str(), a.attributes.device,
                    a.attributes.devicePointer, a.attributes.hostPointer);
    }
    std::printf("cudaHostGetDevicePointer: write-combined %p -> %p, registered %p -> %p\n",
                found.write_combined, found.write_combined_on_device, found.registered,
                found.registered_on_device);
    return 0;
}
#endif
