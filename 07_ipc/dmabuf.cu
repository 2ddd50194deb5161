// Section dmabuf: device memory handed out as a Linux dma-buf, the file descriptor an RDMA NIC
// or another driver imports to reach GPU memory directly. checks/dmabuf.cu judges what comes back.
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <unistd.h>

namespace {

// Step 1. Device memory whose address and size are multiples of the host page size, as the
// entry asks. cudaMalloc's addresses are; the size is rounded up here.
void* device_memory(std::size_t wanted, std::size_t* bytes) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    *bytes = (wanted + page - 1) / page * page;
    void* memory = nullptr;
    CUDA_CHECK(cudaMalloc(&memory, *bytes));
    return memory;
}

// Step 2. The range as a dma-buf: a new file descriptor of this process.
int export_dmabuf(const void* memory, std::size_t bytes) {
    const auto cuMemGetHandleForAddressRange = DRIVER_FUNCTION(cuMemGetHandleForAddressRange);
    int fd = -1;
    CU_CHECK(cuMemGetHandleForAddressRange(&fd, reinterpret_cast<CUdeviceptr>(memory), bytes,
                                           CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
    return fd;
}

// Step 2b. Memory from cuMemCreate qualifies too, once its whole range is mapped (chapter 06's
// steps; the granularity is a multiple of the host page size).
CUdeviceptr vmm_memory(int device, std::size_t wanted, std::size_t* bytes) {
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);
    *bytes = tutorial::round_up(wanted, tutorial::vmm_granularity(prop));
    const CUmemGenericAllocationHandle memory = tutorial::vmm_create(prop, *bytes);
    const CUdeviceptr address = tutorial::vmm_reserve(*bytes, 0);
    tutorial::vmm_map(address, *bytes, memory);
    tutorial::vmm_set_access(address, *bytes, device);
    tutorial::vmm_release(memory);  // the mapping keeps it
    return address;
}

// Step 3. Give it to the importer (ibv_reg_dmabuf_mr for a NIC, say), which keeps its own
// reference; then close ours. The memory itself is freed with cudaFree, as always, once no
// importer uses it any more.
void close_dmabuf(int fd) {
    close(fd);
}

}  // namespace
