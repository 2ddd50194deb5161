// Section cross_gpu (needs 2 or more GPUs): workers on other GPUs than the master's use its memory
// in place. A legacy handle opens as on one GPU; imported VMM memory needs a grant for the
// worker's GPU. (checks/cross_gpu.cu times both against one process with peer access.)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"

#include <unistd.h>

#include <cstdint>

namespace {

constexpr int master_gpu = 0;

// Step 1. The master, on GPU 0, shares cudaMalloc memory by a legacy handle and cuMemCreate memory
// (created exportable) as a file descriptor.
struct Shared {
    std::uint32_t* ipc_buffer = nullptr;
    cudaIpcMemHandle_t handle{};
    CUmemGenericAllocationHandle vmm_memory = 0;
    CUdeviceptr vmm_address = 0;
    std::size_t bytes = 0;
    int fd = -1;
};

Shared make_shared(std::size_t wanted) {
    Shared s;
    CUDA_CHECK(cudaSetDevice(master_gpu));
    const CUmemAllocationProp prop =
        tutorial::vmm_properties(master_gpu, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    s.bytes = tutorial::round_up(wanted, tutorial::vmm_granularity(prop));
    CUDA_CHECK(cudaMalloc(&s.ipc_buffer, s.bytes));
    CUDA_CHECK(cudaIpcGetMemHandle(&s.handle, s.ipc_buffer));
    s.vmm_memory = tutorial::vmm_create(prop, s.bytes);
    s.vmm_address = tutorial::vmm_reserve(s.bytes, 0);
    tutorial::vmm_map(s.vmm_address, s.bytes, s.vmm_memory);
    tutorial::vmm_set_access(s.vmm_address, s.bytes, master_gpu);
    const auto cuMemExportToShareableHandle = DRIVER_FUNCTION(cuMemExportToShareableHandle);
    CU_CHECK(cuMemExportToShareableHandle(&s.fd, s.vmm_memory,
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    return s;
}

// Step 2. A worker on another GPU opens the legacy handle as on the same GPU: with
// cudaIpcMemLazyEnablePeerAccess, peer access to the master's GPU is enabled as needed.
void* open_from_other_gpu(const cudaIpcMemHandle_t& handle) {
    void* data = nullptr;
    CUDA_CHECK(cudaIpcOpenMemHandle(&data, handle, cudaIpcMemLazyEnablePeerAccess));
    return data;
}

void close_from_other_gpu(void* data) {
    CUDA_CHECK(cudaIpcCloseMemHandle(data));
}

// Step 3. Imported VMM memory needs an explicit grant: the memory is on the master's GPU, and the
// access descriptor names this worker's GPU.
CUdeviceptr import_for_this_gpu(int fd, std::size_t bytes, int device) {
    const auto cuMemImportFromShareableHandle = DRIVER_FUNCTION(cuMemImportFromShareableHandle);
    CUmemGenericAllocationHandle memory = 0;
    CU_CHECK(cuMemImportFromShareableHandle(
        &memory, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    const CUdeviceptr address = tutorial::vmm_reserve(bytes, 0);
    tutorial::vmm_map(address, bytes, memory);
    tutorial::vmm_release(memory);
    tutorial::vmm_set_access(address, bytes, device);
    return address;
}

// Step 4. Where is the memory? For device memory, the cudaPointerGetAttributes entry says
// `device` is the GPU where it resides. The worker asks, for each way in.
int device_of(const void* data) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, data));
    return attributes.device;
}

// Step 5. For comparison, the same two GPUs inside one process: GPU `gpu` reaches the master's
// memory once peer access is enabled from it.
void enable_peer_access_from(int gpu) {
    CUDA_CHECK(cudaSetDevice(gpu));
    CUDA_CHECK(cudaDeviceEnablePeerAccess(master_gpu, 0));
}

void disable_peer_access_from(int gpu) {
    CUDA_CHECK(cudaSetDevice(gpu));
    CUDA_CHECK(cudaDeviceDisablePeerAccess(master_gpu));
}

}  // namespace
