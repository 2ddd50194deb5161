// Section which_memory: three ways to hand device memory to another process (a legacy IPC handle,
// a pool's export, a VMM descriptor), each written for its own kind of memory. Each function
// returns the status of its first call that failed, and names that call in `failed`.
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"

#include <unistd.h>

#include <cstdint>

namespace {

// Step 1. The exporter's side.
// Legacy IPC: a handle for a cudaMalloc block, by its base pointer.
cudaError_t export_legacy(void* pointer, cudaIpcMemHandle_t* handle) {
    return cudaIpcGetMemHandle(handle, pointer);
}

// A block from an exportable pool: the pool as a file descriptor, then the block's export data.
cudaError_t export_from_pool(cudaMemPool_t pool, void* pointer, int* fd,
                             cudaMemPoolPtrExportData* data, const char** failed) {
    *failed = "cudaMemPoolExportToShareableHandle";
    const cudaError_t err =
        cudaMemPoolExportToShareableHandle(fd, pool, cudaMemHandleTypePosixFileDescriptor, 0);
    if (err != cudaSuccess) return err;
    *failed = "cudaMemPoolExportPointer";
    return cudaMemPoolExportPointer(data, pointer);
}

// cuMemCreate memory: its allocation handle, found from any address in it, then a descriptor.
CUresult export_vmm(void* pointer, int* fd, const char** failed) {
    const auto cuMemRetainAllocationHandle = DRIVER_FUNCTION(cuMemRetainAllocationHandle);
    const auto cuMemExportToShareableHandle = DRIVER_FUNCTION(cuMemExportToShareableHandle);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    CUmemGenericAllocationHandle memory = 0;
    *failed = "cuMemRetainAllocationHandle";
    CUresult err = cuMemRetainAllocationHandle(&memory, pointer);
    if (err != CUDA_SUCCESS) return err;
    *failed = "cuMemExportToShareableHandle";
    err = cuMemExportToShareableHandle(fd, memory, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CU_CHECK(cuMemRelease(memory));  // the retain took a reference; the allocation keeps its own
    return err;
}

// Step 2. The importer's side, in another process.
// Legacy IPC: the handle opens at an address of this process (cudaIpcCloseMemHandle when done).
cudaError_t import_legacy(const cudaIpcMemHandle_t& handle, void** opened) {
    return cudaIpcOpenMemHandle(opened, handle, cudaIpcMemLazyEnablePeerAccess);
}

// A pool's block: the pool from its descriptor, this GPU given access, then the block from its
// export data (cudaFree it, then cudaMemPoolDestroy the pool, before the exporter frees it).
cudaError_t import_from_pool(int device, int fd, cudaMemPoolPtrExportData* data,
                             cudaMemPool_t* pool, void** block, const char** failed) {
    *failed = "cudaMemPoolImportFromShareableHandle";
    const cudaError_t err = cudaMemPoolImportFromShareableHandle(
        pool, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
        cudaMemHandleTypePosixFileDescriptor, 0);
    close(fd);
    if (err != cudaSuccess) return err;
    const cudaMemAccessDesc grant{{cudaMemLocationTypeDevice, device},
                                  cudaMemAccessFlagsProtReadWrite};
    CUDA_CHECK(cudaMemPoolSetAccess(*pool, &grant, 1));
    *failed = "cudaMemPoolImportPointer";
    return cudaMemPoolImportPointer(block, *pool, data);
}

// cuMemCreate memory: the descriptor becomes this process's handle to the allocation, mapped at
// an address of its own; the mapping keeps the memory (unmap and free the range when done).
CUresult import_vmm(int device, int fd, std::size_t bytes, CUdeviceptr* address) {
    const auto cuMemImportFromShareableHandle = DRIVER_FUNCTION(cuMemImportFromShareableHandle);
    CUmemGenericAllocationHandle memory = 0;
    const CUresult err = cuMemImportFromShareableHandle(
        &memory, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    close(fd);
    if (err != CUDA_SUCCESS) return err;
    *address = tutorial::vmm_reserve(bytes, 0);
    tutorial::vmm_map(*address, bytes, memory);
    tutorial::vmm_set_access(*address, bytes, device);
    tutorial::vmm_release(memory);
    return err;
}

}  // namespace
