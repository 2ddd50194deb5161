// Section `properties`: what this device offers for sharing memory and events between processes.
// Each property predicts that a call works (or is refused), and the section makes the call.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/driver.hpp"
#include "common/harness/predictions.hpp"
#include "common/vmm.hpp"
#include "common/harness/chapter.hpp"

#include <unistd.h>

#include <string>

using tutorial::Prediction;

namespace {

struct IpcProperties {
    int unified_addressing;      // legacy IPC handles for cudaMalloc memory
    int ipc_event_supported;     // interprocess events
    int memory_pools_supported;  // cudaMallocAsync, and pools that can be exported
    int posix_fd_supported;      // VMM memory exported as a file descriptor (driver API)
};

// lesson:begin
// Each way of sharing memory between processes has a property that says whether it works here.
IpcProperties ipc_properties(int device) {
    IpcProperties p{};
    CUDA_CHECK(cudaDeviceGetAttribute(&p.unified_addressing, cudaDevAttrUnifiedAddressing, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.ipc_event_supported, cudaDevAttrIpcEventSupport, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.memory_pools_supported, cudaDevAttrMemoryPoolsSupported,
                                      device));
    p.posix_fd_supported = tutorial::driver_attribute(
        device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
    return p;
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above: each property's
// prediction, then a test of it. ----

// A call that is allowed to fail: did it succeed, and what did it return, in words.
struct Outcome {
    bool ok;
    std::string seen;
};

Outcome runtime_outcome(const char* call, cudaError_t status) {
    cudaGetLastError();  // a refusal is an outcome here, not a failure of the program
    return {status == cudaSuccess, std::string(call) + " returned " + cudaGetErrorName(status)};
}

// `where`: the reference entry that ties the property to the behaviour.
Prediction predict(const char* property, int value, const char* works, const Outcome& outcome,
                   const char* where) {
    return {property,
            value,
            value ? works : "the call is refused",
            outcome.ok == (value != 0),
            outcome.seen,
            tutorial::Evidence::documented,
            where};
}

Outcome memory_handle() {
    void* data = nullptr;
    CUDA_CHECK(cudaMalloc(&data, 1 << 20));
    cudaIpcMemHandle_t handle{};
    const Outcome outcome =
        runtime_outcome("cudaIpcGetMemHandle", cudaIpcGetMemHandle(&handle, data));
    CUDA_CHECK(cudaFree(data));
    return outcome;
}

Outcome event_handle() {
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventInterprocess | cudaEventDisableTiming));
    cudaIpcEventHandle_t handle{};
    const Outcome outcome =
        runtime_outcome("cudaIpcGetEventHandle", cudaIpcGetEventHandle(&handle, event));
    CUDA_CHECK(cudaEventDestroy(event));
    return outcome;
}

Outcome pool_allocation() {
    void* data = nullptr;
    const cudaError_t status = cudaMallocAsync(&data, 1 << 20, nullptr);
    const Outcome outcome = runtime_outcome("cudaMallocAsync", status);
    if (status == cudaSuccess) CUDA_CHECK(cudaFreeAsync(data, nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());
    return outcome;
}

// cuMemCreate memory that may be exported as a POSIX file descriptor, and the export itself.
Outcome descriptor_export(int device) {
    if (!tutorial::vmm_supported(device)) return {false, "no VMM, so nothing to export"};
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemExportToShareableHandle = DRIVER_FUNCTION(cuMemExportToShareableHandle);
    const CUmemAllocationProp prop =
        tutorial::vmm_properties(device, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CUmemGenericAllocationHandle memory = 0;
    const CUresult created = cuMemCreate(&memory, tutorial::vmm_granularity(prop), &prop, 0);
    if (created != CUDA_SUCCESS) return {false, "cuMemCreate(POSIX_FILE_DESCRIPTOR) refused"};
    int fd = -1;
    const CUresult exported =
        cuMemExportToShareableHandle(&fd, memory, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    if (fd >= 0) close(fd);
    tutorial::vmm_release(memory);
    return {exported == CUDA_SUCCESS, exported == CUDA_SUCCESS
                                          ? "cuMemExportToShareableHandle gave a descriptor"
                                          : "cuMemExportToShareableHandle refused"};
}

}  // namespace

tutorial::Result run_properties(tutorial::Context& ctx) {
    const IpcProperties p = ipc_properties(ctx.device);
    const std::vector<Prediction> predictions = {
        // The cudaIpcGetMemHandle entry: IPC only on devices with unified addressing.
        predict("unifiedAddressing", p.unified_addressing,
                "legacy IPC can make a handle for cudaMalloc memory", memory_handle(),
                "Runtime API reference: cudaIpcGetMemHandle"),
        predict("ipcEventSupported", p.ipc_event_supported,
                "an interprocess event can be given a handle", event_handle(),
                "Runtime API reference: cudaDeviceAttr, cudaIpcGetEventHandle"),
        predict("memoryPoolsSupported", p.memory_pools_supported,
                "cudaMallocAsync allocates from the device's pool", pool_allocation(),
                "Runtime API reference: cudaDeviceAttr"),
        // The driver's attribute says exports as a descriptor work when cuMemCreate asks for it.
        predict("HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED", p.posix_fd_supported,
                "VMM memory can be exported as a file descriptor", descriptor_export(ctx.device),
                "Driver API reference: CUdevice_attribute, cuMemExportToShareableHandle"),
    };
    return tutorial::check_predictions(ctx, predictions);
}

TUTORIAL_SECTION(properties, run_properties);
