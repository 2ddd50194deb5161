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

// The behaviour a value predicts. Where the value is 1 and `entry` names an entry whose own words
// tie it to the call, the prediction is documented; otherwise (a value of 0, or an entry that
// only describes the property) it is what this driver did: the attribute entries say what is
// supported and name no error for what is not. `open` says what the reference leaves open.
Prediction predict(const char* property, int value, const char* works, const Outcome& outcome,
                   const tutorial::Entry& entry, const std::string& open) {
    Prediction p{property, value, value ? works : "the call is refused", outcome.ok == (value != 0),
                 outcome.seen};
    if (value != 0 && !entry.where.empty()) {
        p.evidence = tutorial::Evidence::documented;
        p.entry = entry;
    } else {
        p.evidence = tutorial::Evidence::observed;
        p.where = value != 0 ? open
                             : open + "; where the value is 0, no entry names what the call "
                                      "returns";
    }
    return p;
}

// The entries whose own words tie a property to a call. The cudaIpcGetMemHandle entry (and the
// cudaIpcGetEventHandle entry, in the same words) names ipcEventSupported as the test for IPC;
// the Guide's E.3.1 makes users query the POSIX descriptor attribute before exporting cuMemCreate
// memory.
const tutorial::Entry ipc_test{"Runtime API reference: cudaIpcGetMemHandle",
                               "cudaDeviceGetAttribute cudaDevAttrIpcEventSupport", "can"};
const tutorial::Entry posix_fd_query{"Programming Guide, E.3.1 Shareable Memory Allocations",
                                     "cuMemCreate CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED",
                                     "必須"};

Outcome memory_handle() {
    return runtime_outcome("cudaIpcGetMemHandle", try_memory_handle());
}

// Legacy IPC's two handles, a memory handle and an event handle.
Outcome legacy_handles() {
    const cudaError_t memory = try_memory_handle();
    const cudaError_t event = try_event_handle();
    return {memory == cudaSuccess && event == cudaSuccess,
            std::string("cudaIpcGetMemHandle returned ") + cudaGetErrorName(memory) +
                ", cudaIpcGetEventHandle " + cudaGetErrorName(event)};
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
        predict("unifiedAddressing", p.unified_addressing,
                "legacy IPC can make a handle for cudaMalloc memory", memory_handle(), {},
                "the cudaIpcGetMemHandle entry restricts IPC to devices with unified addressing: a "
                "condition, which promises nothing where the value is 1"),
        predict("ipcEventSupported", p.ipc_event_supported,
                "legacy IPC works: a memory handle and an event handle", legacy_handles(),
                ipc_test, "the cudaIpcGetMemHandle entry names this attribute as the test for IPC"),
        predict("memoryPoolsSupported", p.memory_pools_supported,
                "cudaMallocAsync allocates from the device's pool", pool_allocation(), {},
                "the cudaDevAttrMemoryPoolsSupported entry says \"Device supports using the "
                "cudaMallocAsync and cudaMemPool family of APIs\", in no word of a rule (must, "
                "will, can)"),
        predict("handleTypePosixFileDescriptorSupported", p.posix_fd_supported,
                "VMM memory can be exported as a file descriptor", descriptor_export(ctx.device),
                posix_fd_query,
                "the Guide's E.3.1 makes this attribute the query before an export"),
    };
    return tutorial::check_predictions(ctx, predictions);
}

TUTORIAL_SECTION(properties, run_properties);
