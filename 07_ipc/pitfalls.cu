// Section pitfalls (fault demo): IPC calls used the wrong way, each with what it returns.
// Built alone, from the course's folder (mkdir -p build first), then ./build/pitfalls:
//   nvcc -std=c++17 -I. 07_ipc/pitfalls.cu common/standalone.cu -o build/pitfalls
//   (or in 07_ipc/: nvcc -std=c++17 -I.. pitfalls.cu ../common/standalone.cu -o ../build/pitfalls)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/process.hpp"
#include "common/vmm.hpp"
#include <unistd.h>
#include <cstdint>
#include <cstdlib>
#include <vector>
namespace {

// None of the calls below is checked: what each returns is the lesson, and a refusal's error is
// cleared.

// Workers: this program started again, a Unix socket as stdin and stdout (common/process.hpp).
using tutorial::Worker, tutorial::read_all, tutorial::send_all, tutorial::start_worker,
    tutorial::wait_for;

constexpr std::uint32_t seed = 5;  // the buffer's values, pattern(i, 5): none of them 0

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
// value there (pattern(i, seed) differs for every i, so the value tells which element it is).
int peek_worker(int device) {
    CUDA_CHECK(cudaSetDevice(device));
    cudaIpcMemHandle_t handle{};
    if (!read_all(STDIN_FILENO, &handle, sizeof handle)) return 4;
    void* opened = nullptr;
    CUDA_CHECK(cudaIpcOpenMemHandle(&opened, handle, cudaIpcMemLazyEnablePeerAccess));
    std::uint32_t first = 0;
    CUDA_CHECK(cudaMemcpy(&first, opened, sizeof first, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaIpcCloseMemHandle(opened));
    return send_all(STDOUT_FILENO, &first, sizeof first) ? 0 : 4;
}

// Step 3. A pool at cudaMemLocationTypeHost cannot be shared: its entry refuses any handle type
// for it (a pool at cudaMemLocationTypeHostNuma can be: section host_shared).
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

// What each misuse returned, and for the interior handle whether another process could open it
// (peeked) and the first value it found there.
struct Found {
    LegacyMisuse legacy;
    bool peeked;
    std::uint32_t first_value;
    cudaError_t host_pool;
    VmmMisuse vmm;
    TimedEvent event;
};

// `self` runs this program again, in the role named after it ("peek_worker" and the device).
Found walkthrough(int device, const std::vector<std::string>& self) {
    Found found{};
    // 1. A cudaMalloc buffer of 2 MiB with known values (a smaller one may share its block with
    //    other allocations, and a handle to it would share them too), and managed memory.
    constexpr std::size_t bytes = std::size_t{2} << 20;
    void* buffer = nullptr;
    void* managed = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer, bytes));
    CUDA_CHECK(cudaMallocManaged(&managed, bytes));
    fill_on_device(static_cast<std::uint32_t*>(buffer), bytes / 4, seed);
    // 2. The legacy calls used the wrong way (Step 1).
    found.legacy = legacy_misuses(buffer, managed);
    // 3. If the interior pointer got a handle, another process opens it (Step 2), while the
    //    buffer is still allocated.
    if (found.legacy.interior == cudaSuccess) {
        std::vector<std::string> command = self;
        command.insert(command.end(), {"peek_worker", std::to_string(device)});
        const Worker peek = start_worker(command);
        found.peeked =
            send_all(peek.socket, &found.legacy.interior_handle, sizeof(cudaIpcMemHandle_t)) &&
            read_all(peek.socket, &found.first_value, sizeof found.first_value);
        wait_for(peek);
    }
    // 4. A pool of host memory asked to be shareable (Step 3), VMM memory through the wrong
    //    calls (Step 4), and an interprocess event that records timing (Step 5).
    found.host_pool = exportable_host_pool();
    found.vmm = vmm_misuses(device);
    found.event = timed_interprocess_event();
    CUDA_CHECK(cudaFree(buffer));
    CUDA_CHECK(cudaFree(managed));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
// Alone, this program makes every misuse itself; the process that opens the interior handle is
// the same program, started as `<program> peek_worker <device>`.
int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "peek_worker") {
        return peek_worker(std::atoi(argv[2]));
    }
    const Found f = walkthrough(0, {"/proc/self/exe"});
    std::printf("opening its own handle: %s\n", cudaGetErrorName(f.legacy.own));
    std::printf("a handle 4 KiB into the allocation: %s", cudaGetErrorName(f.legacy.interior));
    if (f.peeked) {
        std::printf("; another process found element %s there\n",
                    f.first_value == pattern(0, seed) ? "0, the allocation's start" : "(other)");
    } else {
        std::printf("\n");
    }
    std::printf("a handle for managed memory: %s\n", cudaGetErrorName(f.legacy.of_managed));
    std::printf("an exportable pool of host memory: %s\n", cudaGetErrorName(f.host_pool));
    std::printf("exporting VMM memory with no handle type: %s\n",
                tutorial::driver_error_name(f.vmm.exported));
    std::printf("a legacy handle for VMM memory: %s\n", cudaGetErrorName(f.vmm.of_vmm));
    std::printf("an interprocess event that records timing: %s\n",
                cudaGetErrorName(f.event.created));
    return 0;
}
#endif
