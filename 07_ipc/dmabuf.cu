// Section dmabuf: device memory handed out as a Linux dma-buf, the file descriptor an RDMA NIC
// or another driver imports to reach GPU memory directly. checks/dmabuf.cu judges what comes back.
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <numeric>

namespace {

// Step 1. The entry makes alignment the caller's job: the range's address and size must be
// multiples of the host page size. cudaMalloc promises 256-byte alignment only, so the allocation
// is a page larger than the range, which starts at the allocation's first page boundary.
std::size_t host_page() {
    return static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

CUdeviceptr first_page_boundary(const void* pointer) {
    const std::size_t page = host_page();
    return (reinterpret_cast<CUdeviceptr>(pointer) + page - 1) / page * page;
}

void* device_memory(std::size_t wanted, std::size_t* bytes) {  // cudaFree the allocation
    *bytes = (wanted + host_page() - 1) / host_page() * host_page();
    void* allocation = nullptr;
    CUDA_CHECK(cudaMalloc(&allocation, *bytes + host_page()));
    return allocation;
}

// Step 2. The range as a dma-buf: a new file descriptor of this process.
int export_dmabuf(CUdeviceptr start, std::size_t bytes) {
    const auto cuMemGetHandleForAddressRange = DRIVER_FUNCTION(cuMemGetHandleForAddressRange);
    int fd = -1;
    CU_CHECK(cuMemGetHandleForAddressRange(&fd, start, bytes, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
    return fd;
}

// Step 2b. Memory from cuMemCreate qualifies too, once its whole range is mapped (chapter 06's
// steps): a size that is a multiple of both the granularity and the host page, and a reservation
// that asks for page alignment.
CUdeviceptr vmm_memory(int device, std::size_t wanted, std::size_t* bytes) {
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);
    *bytes = tutorial::round_up(wanted, std::lcm(tutorial::vmm_granularity(prop), host_page()));
    const CUmemGenericAllocationHandle memory = tutorial::vmm_create(prop, *bytes);
    const CUdeviceptr address = tutorial::vmm_reserve(*bytes, host_page());
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
