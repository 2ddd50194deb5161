// Section dmabuf: device memory handed out as a Linux dma-buf, for NICs and other drivers.
// Built alone, from the course's folder (mkdir -p build first), then ./build/dmabuf:
//   nvcc -std=c++17 -I. 07_ipc/dmabuf.cu common/standalone.cu -o build/dmabuf
//   (or in 07_ipc/: nvcc -std=c++17 -I.. dmabuf.cu ../common/standalone.cu -o ../build/dmabuf)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"
#include <unistd.h>
#include <numeric>
#include <string>
namespace {

// A dma-buf is the file descriptor an RDMA NIC (ibv_reg_dmabuf_mr) or another driver imports to
// reach GPU memory directly. cuMemGetHandleForAddressRange makes one for a range of cudaMalloc
// memory, or of cuMemCreate memory mapped over the whole range.

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

// Step 2. The range as a dma-buf: a new file descriptor of this process, in *fd. The entry
// supports ranges of cuMemAlloc memory and names no runtime allocation, so for cudaMalloc's the
// answer is this driver's: the result is returned, not stopped on.
CUresult export_dmabuf(CUdeviceptr start, std::size_t bytes, int* fd) {
    const auto cuMemGetHandleForAddressRange = DRIVER_FUNCTION(cuMemGetHandleForAddressRange);
    *fd = -1;
    return cuMemGetHandleForAddressRange(fd, start, bytes, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
}

// Step 2b. Memory from cuMemCreate qualifies too, once its whole range is mapped (chapter 06's
// steps). cuMemMap wants the address and size to be multiples of the allocation granularity, the
// export wants them multiples of the host page: the size and the reservation's alignment are
// multiples of both.
CUdeviceptr vmm_memory(int device, std::size_t wanted, std::size_t* bytes) {
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);
    const std::size_t both = std::lcm(tutorial::vmm_granularity(prop), host_page());
    *bytes = tutorial::round_up(wanted, both);
    const CUmemGenericAllocationHandle memory = tutorial::vmm_create(prop, *bytes);
    const CUdeviceptr address = tutorial::vmm_reserve(*bytes, both);
    tutorial::vmm_map(address, *bytes, memory);
    tutorial::vmm_set_access(address, *bytes, device);
    tutorial::vmm_release(memory);  // the mapping keeps it
    return address;
}

// Step 3. What an importer is handed: Linux names a dma-buf "/dmabuf:" in /proc/self/fd, and its
// size is where lseek finds the end.
struct Seen {
    std::string name;
    long long size = 0;
};

Seen look_at(int fd) {
    char target[256] = {};
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    return {n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "(unreadable)",
            static_cast<long long>(lseek(fd, 0, SEEK_END))};
}

// What the walkthrough found for each export: the range's size, what the export returned, the
// descriptor and what it is.
struct Export {
    std::size_t bytes = 0;
    CUresult result = CUDA_SUCCESS;
    int fd = -1;
    Seen seen;
};

struct Found {
    Export malloced, vmm;
};

Found walkthrough(int device, std::size_t wanted) {
    Found found;
    // 1. cudaMalloc memory, a page larger than the page-aligned range to export.
    void* allocation = device_memory(wanted, &found.malloced.bytes);
    // 2. The range as a dma-buf, where this driver makes one, and what it is.
    found.malloced.result =
        export_dmabuf(first_page_boundary(allocation), found.malloced.bytes, &found.malloced.fd);
    // 3. Give it to the importer, which keeps its own reference; then close ours. The memory is
    //    freed as always, once no importer uses it any more.
    if (found.malloced.result == CUDA_SUCCESS) {
        found.malloced.seen = look_at(found.malloced.fd);
        close(found.malloced.fd);
    }
    CUDA_CHECK(cudaFree(allocation));
    // 4. The same for cuMemCreate memory (Step 2b), 2 MiB of it: the entry supports this range.
    const CUdeviceptr vmm = vmm_memory(device, std::size_t{2} << 20, &found.vmm.bytes);
    CU_CHECK(export_dmabuf(vmm, found.vmm.bytes, &found.vmm.fd));
    found.vmm.seen = look_at(found.vmm.fd);
    close(found.vmm.fd);
    tutorial::vmm_unmap(vmm, found.vmm.bytes);
    tutorial::vmm_free(vmm, found.vmm.bytes);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
int main() {
    const Found found = walkthrough(0, std::size_t{2} << 20);
    for (const Export& e : {found.malloced, found.vmm}) {
        if (e.result != CUDA_SUCCESS) {
            std::printf("%zu bytes not exported: %s\n", e.bytes,
                        tutorial::driver_error_name(e.result));
            continue;
        }
        std::printf("%zu bytes exported as descriptor %d: \"%s\", %lld bytes\n", e.bytes, e.fd,
                    e.seen.name.c_str(), e.seen.size);
    }
    return 0;
}
#endif
