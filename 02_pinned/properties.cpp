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

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched (on
// the legacy default stream, which waits for both copy streams and they for it).
constexpr tutorial::Step upload_alone{"an upload alone"};
constexpr tutorial::Step download_alone{"a download alone"};
constexpr tutorial::Step both_at_once{"an upload and a download at once"};

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
    {
        const tutorial::During during(upload_alone);
        CUDA_CHECK(cudaMemcpyAsync(device_up, host_up, copy_bytes, cudaMemcpyHostToDevice, up));
    }
    {
        const tutorial::During during(download_alone);
        CUDA_CHECK(
            cudaMemcpyAsync(host_down, device_down, copy_bytes, cudaMemcpyDeviceToHost, down));
    }
    {
        const tutorial::During during(both_at_once);
        CUDA_CHECK(cudaMemcpyAsync(device_up, host_up, copy_bytes, cudaMemcpyHostToDevice, up));
        CUDA_CHECK(
            cudaMemcpyAsync(host_down, device_down, copy_bytes, cudaMemcpyDeviceToHost, down));
    }
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
    // Seven rounds, so that a slow moment of the link falls on all three copies alike.
    Found f{};
    for (int round = 0; round < 7; ++round) f = walkthrough(0, std::size_t{64} << 20);
    times.print();
    std::printf("canMapHostMemory = %d: a kernel's write through the mapping: %zu values wrong\n",
                f.can_map_host_memory, f.mapped_wrong);
    std::printf("hostRegisterSupported = %d: cudaHostRegister returned %s\n",
                f.host_register_supported, cudaGetErrorName(f.registered));
    std::printf("hostRegisterReadOnlySupported = %d: cudaHostRegister(ReadOnly) returned %s\n",
                f.host_register_read_only_supported, cudaGetErrorName(f.registered_read_only));
    std::printf("asyncEngineCount = %d, integrated = %d\n", f.async_engine_count, f.integrated);
    // The answer: both copies at once, as a share of one after the other (medians).
    const double up_ms = times.median_ms(upload_alone);
    const double down_ms = times.median_ms(download_alone);
    const double both_ms = times.median_ms(both_at_once);
    std::printf("64 MiB: an upload took %.3f ms, a download %.3f ms, both at once %.3f ms: %.0f%% "
                "of one after the other (asyncEngineCount = %d)\n",
                up_ms, down_ms, both_ms, 100.0 * both_ms / (up_ms + down_ms),
                f.async_engine_count);
    return 0;
}
#endif
