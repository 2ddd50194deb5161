// Section pitfalls (fault demo): IPC calls used the wrong way, each with what it returns. None is
// checked here: what each returns is the lesson. (checks/pitfalls.cu makes them in a child.)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"

#include <cstddef>
#include <cstdint>

namespace {

// Step 1. Legacy IPC handles are for whole cudaMalloc allocations, opened by another process.
// Each call below steps outside that.
struct LegacyMisuse {
    cudaError_t own;       // opening a handle in the process that made it
    cudaError_t interior;  // a handle for an address inside an allocation
    cudaIpcMemHandle_t interior_handle;
    cudaError_t of_managed;  // a handle for managed memory
};

LegacyMisuse legacy_misuses(void* buffer, void* managed) {
    LegacyMisuse m{};
    cudaIpcMemHandle_t handle{};
    CUDA_CHECK(cudaIpcGetMemHandle(&handle, buffer));
    void* opened = nullptr;
    m.own = cudaIpcOpenMemHandle(&opened, handle, cudaIpcMemLazyEnablePeerAccess);
    if (m.own == cudaSuccess) CUDA_CHECK(cudaIpcCloseMemHandle(opened));  // a driver that allows it
    m.interior = cudaIpcGetMemHandle(&m.interior_handle, static_cast<char*>(buffer) + 4096);
    cudaIpcMemHandle_t unused{};
    m.of_managed = cudaIpcGetMemHandle(&unused, managed);
    (void)cudaGetLastError();  // the refusals also left their error as the last one
    return m;
}

// Step 2. Where the interior pointer's handle leads: another process opens it and reads the first
// value there.
std::uint32_t first_value_through(const cudaIpcMemHandle_t& handle) {
    void* opened = nullptr;
    CUDA_CHECK(cudaIpcOpenMemHandle(&opened, handle, cudaIpcMemLazyEnablePeerAccess));
    std::uint32_t first = 0;
    CUDA_CHECK(cudaMemcpy(&first, opened, sizeof first, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaIpcCloseMemHandle(opened));
    return first;
}

// Step 3. A pool of host memory cannot be shared: its entry refuses any handle type for it.
cudaError_t exportable_host_pool() {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;  // asks to be shareable...
    props.location.type = cudaMemLocationTypeHost;             // ...as a pool of host memory
    cudaMemPool_t pool = nullptr;
    const cudaError_t status = cudaMemPoolCreate(&pool, &props);
    if (status == cudaSuccess) CUDA_CHECK(cudaMemPoolDestroy(pool));  // a driver that allows it
    (void)cudaGetLastError();
    return status;
}

// Step 4. VMM memory through the wrong calls: exported though it was created with no handle type,
// and given to the legacy cudaIpcGetMemHandle although mapped and usable like cudaMalloc memory
// (the Guide's Virtual Memory Management appendix, E.3.1: the legacy calls do not support it).
struct VmmMisuse {
    CUresult exported;   // cuMemExportToShareableHandle with no requested handle type
    cudaError_t of_vmm;  // cudaIpcGetMemHandle on mapped cuMemCreate memory
};

VmmMisuse vmm_misuses(int device) {
    const auto cuMemExportToShareableHandle = DRIVER_FUNCTION(cuMemExportToShareableHandle);
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);  // not exportable
    const std::size_t bytes = tutorial::vmm_granularity(prop);
    const CUmemGenericAllocationHandle memory = tutorial::vmm_create(prop, bytes);
    VmmMisuse m{};
    int fd = -1;
    m.exported =
        cuMemExportToShareableHandle(&fd, memory, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    const CUdeviceptr address = tutorial::vmm_reserve(bytes, 0);
    tutorial::vmm_map(address, bytes, memory);
    tutorial::vmm_set_access(address, bytes, device);
    cudaIpcMemHandle_t unused{};
    m.of_vmm = cudaIpcGetMemHandle(&unused, reinterpret_cast<void*>(address));
    (void)cudaGetLastError();
    tutorial::vmm_unmap(address, bytes);
    tutorial::vmm_free(address, bytes);
    tutorial::vmm_release(memory);
    return m;
}

// Step 5. An event for another process without cudaEventDisableTiming, which the
// cudaEventCreateWithFlags entry requires along with cudaEventInterprocess. If creating it is
// accepted, the handle is what may be refused.
struct TimedEvent {
    cudaError_t created;
    cudaError_t handle;
};

TimedEvent timed_interprocess_event() {
    TimedEvent t{cudaSuccess, cudaSuccess};
    cudaEvent_t timed = nullptr;
    t.created = cudaEventCreateWithFlags(&timed, cudaEventInterprocess);
    (void)cudaGetLastError();
    if (t.created == cudaSuccess) {
        cudaIpcEventHandle_t event_handle{};
        t.handle = cudaIpcGetEventHandle(&event_handle, timed);
        (void)cudaGetLastError();
        CUDA_CHECK(cudaEventDestroy(timed));
    }
    return t;
}

}  // namespace
