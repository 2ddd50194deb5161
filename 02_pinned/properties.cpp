// Section properties: the device attributes pinned memory depends on, each read with
// cudaDeviceGetAttribute, then the behaviour each one predicts, tried.
// Built alone, from the course's folder (mkdir -p build first), then ./build/properties:
//   nvcc -std=c++17 -I. 02_pinned/properties.cpp common/standalone.cu -o build/properties
//   (or in 02_pinned/: nvcc -std=c++17 -I.. properties.cpp ../common/standalone.cu
//       -o ../build/properties)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// What the walkthrough found: the attributes, and what each predicted behaviour did.
struct Found {
    int can_map_host_memory, host_register_supported, host_register_read_only_supported;
    int async_engine_count, integrated;
    cudaError_t mapped_alloc, mapped_pointer;  // cudaHostAlloc(Mapped), cudaHostGetDevicePointer
    std::size_t mapped_wrong;                  // the kernel's values that did not arrive
    cudaError_t registered, registered_read_only;  // cudaHostRegister of malloc memory
};

// Whether cudaHostRegister with these flags pins memory that malloc returned. A refused call
// leaves its error behind as the last error, which the next launch check would report: clear it.
cudaError_t register_malloc_memory(unsigned int flags) {
    const std::size_t bytes = 1 << 20;
    void* memory = std::malloc(bytes);
    const cudaError_t status = cudaHostRegister(memory, bytes, flags);
    if (status == cudaSuccess) CUDA_CHECK(cudaHostUnregister(memory));
    if (status != cudaSuccess) (void)cudaGetLastError();
    std::free(memory);
    return status;
}

Found walkthrough(int device, std::size_t copy_bytes) {
    Found f{};
    // 1. cudaDeviceGetAttribute reads one property at a time, as an int.
    CUDA_CHECK(cudaDeviceGetAttribute(&f.can_map_host_memory, cudaDevAttrCanMapHostMemory, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&f.host_register_supported, cudaDevAttrHostRegisterSupported,
                                      device));
    CUDA_CHECK(cudaDeviceGetAttribute(&f.host_register_read_only_supported,
                                      cudaDevAttrHostRegisterReadOnlySupported, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&f.async_engine_count, cudaDevAttrAsyncEngineCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&f.integrated, cudaDevAttrIntegrated, device));

    // 2. canMapHostMemory: a kernel writes through the device pointer of mapped host memory.
    //    Where it is 0, cudaHostAlloc still accepts the flag and cudaHostGetDevicePointer fails.
    const std::size_t count = 1 << 16;
    std::uint32_t* host = nullptr;
    f.mapped_alloc = cudaHostAlloc(&host, count * sizeof *host, cudaHostAllocMapped);
    std::uint32_t* device_view = nullptr;
    if (f.mapped_alloc == cudaSuccess)
        f.mapped_pointer = cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_view), host, 0);
    if (f.mapped_alloc != cudaSuccess || f.mapped_pointer != cudaSuccess) (void)cudaGetLastError();
    if (device_view != nullptr) {
        fill_on_device(device_view, count, 42);  // a kernel writes through the mapping
        f.mapped_wrong = mismatches_on_host(host, count, 42);
    }
    if (host != nullptr) CUDA_CHECK(cudaFreeHost(host));

    // 3. hostRegisterSupported, hostRegisterReadOnlySupported: malloc memory pinned in place.
    f.registered = register_malloc_memory(cudaHostRegisterDefault);
    f.registered_read_only = register_malloc_memory(cudaHostRegisterReadOnly);

    // 4. asyncEngineCount: with two or more copy engines, an upload in one stream and a download
    //    in another run at the same time. Pinned host ends: pageable copies overlap nothing.
    //    Streams made with the default flag wait for the legacy default stream and it for them.
    void *host_up = nullptr, *host_down = nullptr, *device_up = nullptr, *device_down = nullptr;
    CUDA_CHECK(cudaMallocHost(&host_up, copy_bytes));
    CUDA_CHECK(cudaMallocHost(&host_down, copy_bytes));
    std::memset(host_up, 0, copy_bytes);
    CUDA_CHECK(cudaMalloc(&device_up, copy_bytes));
    CUDA_CHECK(cudaMalloc(&device_down, copy_bytes));
    CUDA_CHECK(cudaMemset(device_down, 0, copy_bytes));  // what goes down is initialized data
    cudaStream_t up = nullptr, down = nullptr;
    CUDA_CHECK(cudaStreamCreate(&up));
    CUDA_CHECK(cudaStreamCreate(&down));
    tutorial::step("an upload alone");
    CUDA_CHECK(cudaMemcpyAsync(device_up, host_up, copy_bytes, cudaMemcpyHostToDevice, up));
    tutorial::step("a download alone");
    CUDA_CHECK(cudaMemcpyAsync(host_down, device_down, copy_bytes, cudaMemcpyDeviceToHost, down));
    tutorial::step("an upload and a download at once");
    CUDA_CHECK(cudaMemcpyAsync(device_up, host_up, copy_bytes, cudaMemcpyHostToDevice, up));
    CUDA_CHECK(cudaMemcpyAsync(host_down, device_down, copy_bytes, cudaMemcpyDeviceToHost, down));
    tutorial::step_end();
    CUDA_CHECK(cudaDeviceSynchronize());
    for (cudaStream_t stream : {up, down}) CUDA_CHECK(cudaStreamDestroy(stream));
    for (void* p : {device_up, device_down}) CUDA_CHECK(cudaFree(p));
    for (void* p : {host_up, host_down}) CUDA_CHECK(cudaFreeHost(p));
    return f;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found f = walkthrough(0, std::size_t{64} << 20);
    times.print();
    std::printf("canMapHostMemory = %d: a kernel's write through the mapping: %zu values wrong\n",
                f.can_map_host_memory, f.mapped_wrong);
    std::printf("hostRegisterSupported = %d: cudaHostRegister returned %s\n",
                f.host_register_supported, cudaGetErrorName(f.registered));
    std::printf("hostRegisterReadOnlySupported = %d: cudaHostRegister(ReadOnly) returned %s\n",
                f.host_register_read_only_supported, cudaGetErrorName(f.registered_read_only));
    std::printf("asyncEngineCount = %d, integrated = %d\n", f.async_engine_count, f.integrated);
    return 0;
}
#endif
