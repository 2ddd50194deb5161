// Section vmm_fd: the modern way to share GPU memory. A VMM allocation is exported as a POSIX file
// descriptor; another process receives it over a Unix socket, imports it and maps it.
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"

#include <unistd.h>

#include <cstdint>

namespace {

// Step 1. The exporter: memory that may be exported must say so when it is created
// (requestedHandleTypes).
CUmemGenericAllocationHandle create_exportable(int device, std::size_t bytes) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemGenericAllocationHandle memory = 0;
    CU_CHECK(cuMemCreate(&memory, bytes, &prop, 0));
    return memory;
}

// Step 2. Each process maps the allocation at addresses of its own and gives its GPU access, as
// for any VMM memory (chapter 06).
CUdeviceptr map_here(CUmemGenericAllocationHandle memory, std::size_t bytes, int device) {
    const CUdeviceptr address = tutorial::vmm_reserve(bytes, 0);
    tutorial::vmm_map(address, bytes, memory);
    tutorial::vmm_set_access(address, bytes, device);
    return address;
}

// Step 3. The exporter turns the allocation into a file descriptor, which another process can
// receive over a Unix socket (SCM_RIGHTS, helpers/channel.cpp) as a descriptor of its own.
int export_fd(CUmemGenericAllocationHandle memory) {
    const auto cuMemExportToShareableHandle = DRIVER_FUNCTION(cuMemExportToShareableHandle);
    int fd = -1;
    CU_CHECK(
        cuMemExportToShareableHandle(&fd, memory, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    return fd;
}

// Step 4. The importer: the descriptor stands for the physical memory; importing it gives this
// process a handle to the same allocation, which it maps (Step 2). The mapping keeps the memory,
// so neither the descriptor nor the handle is needed after that.
CUdeviceptr import_and_map(int fd, std::size_t bytes, int device) {
    const auto cuMemImportFromShareableHandle = DRIVER_FUNCTION(cuMemImportFromShareableHandle);
    CUmemGenericAllocationHandle memory = 0;
    CU_CHECK(cuMemImportFromShareableHandle(
        &memory, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    const CUdeviceptr address = map_here(memory, bytes, device);
    tutorial::vmm_release(memory);
    return address;
}

}  // namespace
