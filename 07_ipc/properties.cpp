// Section properties: what this device offers for sharing memory and events between processes.
// Built alone, from the course's folder (mkdir -p build first), then ./build/properties:
//   nvcc -std=c++17 -I. 07_ipc/properties.cpp common/standalone.cu -o build/properties
//   (or in 07_ipc/: nvcc -std=c++17 -I.. properties.cpp ../common/standalone.cu
//       -o ../build/properties)  (on the same line)
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"
#include <unistd.h>

namespace {

// Each way of sharing memory between processes has a property that says whether it works here;
// the walkthrough reads them and tries each way once. Any call may be refused: what it returns is
// the answer, so none of those is checked, and a refusal's error is cleared.

cudaError_t try_memory_handle() {  // legacy IPC: a handle for cudaMalloc memory
    void* data = nullptr;
    CUDA_CHECK(cudaMalloc(&data, 1 << 20));
    cudaIpcMemHandle_t handle{};
    const cudaError_t status = cudaIpcGetMemHandle(&handle, data);
    (void)cudaGetLastError();
    CUDA_CHECK(cudaFree(data));
    return status;
}

cudaError_t try_event_handle() {  // ...and one for an interprocess event
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventInterprocess | cudaEventDisableTiming));
    cudaIpcEventHandle_t handle{};
    const cudaError_t status = cudaIpcGetEventHandle(&handle, event);
    (void)cudaGetLastError();
    CUDA_CHECK(cudaEventDestroy(event));
    return status;
}

cudaError_t try_pool_allocation() {  // the stream-ordered allocator, whose pools can be shared
    void* data = nullptr;
    const cudaError_t status = cudaMallocAsync(&data, 1 << 20, nullptr);
    (void)cudaGetLastError();
    if (status == cudaSuccess) CUDA_CHECK(cudaFreeAsync(data, nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());
    return status;
}

// VMM memory that asks to be exportable as a descriptor, then the export itself.
CUresult try_descriptor_export(int device, CUresult* created) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemExportToShareableHandle = DRIVER_FUNCTION(cuMemExportToShareableHandle);
    const CUmemAllocationProp prop =
        tutorial::vmm_properties(device, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CUmemGenericAllocationHandle memory = 0;
    *created = cuMemCreate(&memory, tutorial::vmm_granularity(prop), &prop, 0);
    if (*created != CUDA_SUCCESS) return *created;
    int fd = -1;
    const CUresult exported =
        cuMemExportToShareableHandle(&fd, memory, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    if (fd >= 0) close(fd);
    tutorial::vmm_release(memory);
    return exported;
}

// The properties and what each call returned.
struct Found {
    int unified_addressing = 0;      // legacy IPC is restricted to devices with it
    int ipc_event_supported = 0;     // the test for legacy IPC that its entries name
    int memory_pools_supported = 0;  // cudaMallocAsync and its pools
    int posix_fd_supported = 0;      // VMM memory exported as a file descriptor (driver API)
    cudaError_t memory_handle = cudaSuccess, event_handle = cudaSuccess;
    cudaError_t pool_allocation = cudaSuccess;
    bool vmm = false;  // VMM at all (tutorial::vmm_supported): else nothing to export
    CUresult vmm_created = CUDA_SUCCESS, vmm_exported = CUDA_SUCCESS;
};

Found walkthrough(int device) {
    Found f;
    // 1. The properties.
    CUDA_CHECK(cudaDeviceGetAttribute(&f.unified_addressing, cudaDevAttrUnifiedAddressing, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&f.ipc_event_supported, cudaDevAttrIpcEventSupport, device));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&f.memory_pools_supported, cudaDevAttrMemoryPoolsSupported, device));
    f.posix_fd_supported = tutorial::driver_attribute(
        device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
    // 2. Legacy IPC: a memory handle and an event handle.
    f.memory_handle = try_memory_handle();
    f.event_handle = try_event_handle();
    // 3. A pool allocation.
    f.pool_allocation = try_pool_allocation();
    // 4. VMM memory exported as a file descriptor, where there is VMM at all.
    f.vmm = tutorial::vmm_supported(device);
    if (f.vmm) f.vmm_exported = try_descriptor_export(device, &f.vmm_created);
    return f;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
int main() {
    const Found f = walkthrough(0);
    std::printf(
        "unifiedAddressing = %d, ipcEventSupported = %d: cudaIpcGetMemHandle %s, "
        "cudaIpcGetEventHandle %s\n",
        f.unified_addressing, f.ipc_event_supported, cudaGetErrorName(f.memory_handle),
        cudaGetErrorName(f.event_handle));
    std::printf("memoryPoolsSupported = %d: cudaMallocAsync %s\n", f.memory_pools_supported,
                cudaGetErrorName(f.pool_allocation));
    std::printf(
        "HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = %d: cuMemExportToShareableHandle "
        "%s\n",
        f.posix_fd_supported,
        f.vmm ? tutorial::driver_error_name(f.vmm_exported) : "(no VMM here)");
    return 0;
}
#endif
