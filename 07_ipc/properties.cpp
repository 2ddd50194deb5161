// Section properties: what this device offers for sharing memory and events between processes.
// Each property predicts whether a call works; the lesson reads them and makes the calls.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"

#include <unistd.h>

namespace {

struct IpcProperties {
    int unified_addressing;      // legacy IPC handles for cudaMalloc memory
    int ipc_event_supported;     // interprocess events
    int memory_pools_supported;  // cudaMallocAsync, and pools that can be exported
    int posix_fd_supported;      // VMM memory exported as a file descriptor (driver API)
};

// Step 1. Each way of sharing memory between processes has a property that says whether it works
// here.
IpcProperties ipc_properties(int device) {
    IpcProperties p{};
    CUDA_CHECK(cudaDeviceGetAttribute(&p.unified_addressing, cudaDevAttrUnifiedAddressing, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.ipc_event_supported, cudaDevAttrIpcEventSupport, device));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&p.memory_pools_supported, cudaDevAttrMemoryPoolsSupported, device));
    p.posix_fd_supported = tutorial::driver_attribute(
        device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
    return p;
}

// Step 2. The call each property predicts, made once. Any may be refused: what it returns is the
// answer, so none is checked, and a refusal's error is cleared.
cudaError_t try_memory_handle() {  // unifiedAddressing
    void* data = nullptr;
    CUDA_CHECK(cudaMalloc(&data, 1 << 20));
    cudaIpcMemHandle_t handle{};
    const cudaError_t status = cudaIpcGetMemHandle(&handle, data);
    (void)cudaGetLastError();
    CUDA_CHECK(cudaFree(data));
    return status;
}

cudaError_t try_event_handle() {  // ipcEventSupported
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventInterprocess | cudaEventDisableTiming));
    cudaIpcEventHandle_t handle{};
    const cudaError_t status = cudaIpcGetEventHandle(&handle, event);
    (void)cudaGetLastError();
    CUDA_CHECK(cudaEventDestroy(event));
    return status;
}

cudaError_t try_pool_allocation() {  // memoryPoolsSupported
    void* data = nullptr;
    const cudaError_t status = cudaMallocAsync(&data, 1 << 20, nullptr);
    (void)cudaGetLastError();
    if (status == cudaSuccess) CUDA_CHECK(cudaFreeAsync(data, nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());
    return status;
}

// HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: cuMemCreate memory that asks to be exportable as a
// descriptor, then the export itself (on a device with VMM, tutorial::vmm_supported).
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

}  // namespace
