// Section properties: the device attributes pinned memory depends on, each read with
// cudaDeviceGetAttribute, then the behaviour each one predicts, tried (checks/properties.cpp).
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

// What the device says about host memory.
struct HostMemoryProperties {
    int can_map_host_memory, host_register_supported, host_register_read_only_supported;
    int async_engine_count, integrated;
};

// Step 1. cudaDeviceGetAttribute reads one property at a time, as an int, without a
// cudaDeviceProp.
HostMemoryProperties host_memory_properties(int device) {
    HostMemoryProperties p{};
    CUDA_CHECK(cudaDeviceGetAttribute(&p.can_map_host_memory, cudaDevAttrCanMapHostMemory, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.host_register_supported, cudaDevAttrHostRegisterSupported,
                                      device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.host_register_read_only_supported,
                                      cudaDevAttrHostRegisterReadOnlySupported, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.async_engine_count, cudaDevAttrAsyncEngineCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.integrated, cudaDevAttrIntegrated, device));
    return p;
}

// Step 2. canMapHostMemory: host memory allocated Mapped has a device pointer, and a kernel
// writes through it straight into host memory. Where the value is 0, the cudaHostAlloc entry
// says, cudaHostAlloc still accepts the flag and cudaHostGetDevicePointer is the call that fails.
struct MappedWrite {
    cudaError_t allocated = cudaSuccess;  // cudaHostAlloc(Mapped)
    cudaError_t mapped = cudaSuccess;     // cudaHostGetDevicePointer
    std::size_t wrong = 0;                // the kernel's values that did not arrive
};

MappedWrite write_through_mapping(std::size_t count) {
    MappedWrite w;
    std::uint32_t* host = nullptr;
    w.allocated = cudaHostAlloc(&host, count * sizeof *host, cudaHostAllocMapped);
    if (w.allocated != cudaSuccess) return w;
    std::uint32_t* device_view = nullptr;
    w.mapped = cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_view), host, 0);
    if (w.mapped == cudaSuccess) {
        fill_on_device(device_view, count, 42);  // a kernel writes through the mapping
        w.wrong = mismatches_on_host(host, count, 42);
    }
    CUDA_CHECK(cudaFreeHost(host));
    return w;
}

// Step 3. hostRegisterSupported and hostRegisterReadOnlySupported: whether cudaHostRegister with
// these flags pins memory that malloc returned (1), or refuses (0).
cudaError_t register_malloc_memory(unsigned int flags) {
    const std::size_t bytes = 1 << 20;
    void* memory = std::malloc(bytes);
    const cudaError_t status = cudaHostRegister(memory, bytes, flags);
    if (status == cudaSuccess) CUDA_CHECK(cudaHostUnregister(memory));
    std::free(memory);
    return status;
}

// Step 4. asyncEngineCount: with two or more copy engines, an upload in one stream and a
// download in another run at the same time. The host ends are pinned: copies from pageable
// memory could not overlap anything.
struct TwoWays {
    std::size_t bytes;
    void *host_up, *host_down, *device_up, *device_down;
    cudaStream_t up, down;
};

TwoWays two_ways(std::size_t bytes) {
    TwoWays t{bytes, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    CUDA_CHECK(cudaMallocHost(&t.host_up, bytes));
    CUDA_CHECK(cudaMallocHost(&t.host_down, bytes));
    std::memset(t.host_up, 0, bytes);
    CUDA_CHECK(cudaMalloc(&t.device_up, bytes));
    CUDA_CHECK(cudaMalloc(&t.device_down, bytes));
    CUDA_CHECK(cudaMemset(t.device_down, 0, bytes));  // what goes down is initialized data
    CUDA_CHECK(cudaStreamCreate(&t.up));
    CUDA_CHECK(cudaStreamCreate(&t.down));
    return t;
}

void upload(const TwoWays& t) {
    CUDA_CHECK(cudaMemcpyAsync(t.device_up, t.host_up, t.bytes, cudaMemcpyHostToDevice, t.up));
}

void download(const TwoWays& t) {
    CUDA_CHECK(
        cudaMemcpyAsync(t.host_down, t.device_down, t.bytes, cudaMemcpyDeviceToHost, t.down));
}

void free_two_ways(const TwoWays& t) {
    for (cudaStream_t stream : {t.up, t.down}) CUDA_CHECK(cudaStreamDestroy(stream));
    for (void* p : {t.device_up, t.device_down}) CUDA_CHECK(cudaFree(p));
    for (void* p : {t.host_up, t.host_down}) CUDA_CHECK(cudaFreeHost(p));
}

}  // namespace
