// Checks of section properties: each property of ../properties.cpp predicts that its call works
// (or is refused); the table sets the prediction against what the call returned.
#include "07_ipc/properties.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/predictions.hpp"

#include <string>

using tutorial::Prediction;

namespace {

// A call that is allowed to fail: did it succeed, and what did it return, in words.
struct Outcome {
    bool ok;
    std::string seen;
};

Outcome runtime_outcome(const char* call, cudaError_t status) {
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
    return runtime_outcome("cudaIpcGetMemHandle", try_memory_handle());
}

Outcome event_handle() {
    return runtime_outcome("cudaIpcGetEventHandle", try_event_handle());
}

Outcome pool_allocation() {
    return runtime_outcome("cudaMallocAsync", try_pool_allocation());
}

Outcome descriptor_export(int device) {
    if (!tutorial::vmm_supported(device)) return {false, "no VMM, so nothing to export"};
    CUresult created = CUDA_SUCCESS;
    const CUresult exported = try_descriptor_export(device, &created);
    if (created != CUDA_SUCCESS) return {false, "cuMemCreate(POSIX_FILE_DESCRIPTOR) refused"};
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
