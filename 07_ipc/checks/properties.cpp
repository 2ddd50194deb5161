// Checks of section properties: runs the walkthrough of ../properties.cpp; each property predicts
// that its way of sharing works (or is refused), and the table sets the prediction against what
// the call returned.
#include "07_ipc/properties.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/predictions.hpp"

#include <string>

using tutorial::Prediction;

namespace {

// The behaviour a value predicts. Where the value is 1 and `entry` names an entry whose own words
// tie it to the call, the prediction is documented; otherwise (a value of 0, or an entry that
// only describes the property) it is what this driver did: the attribute entries say what is
// supported and name no error for what is not. `open` says what the reference leaves open.
Prediction predict(const char* property, int value, const char* works, bool worked,
                   const std::string& seen, const tutorial::Entry& entry, const std::string& open) {
    Prediction p{property, value, value ? works : "the call is refused", worked == (value != 0),
                 seen};
    if (value != 0 && !entry.where.empty()) {
        p.evidence = tutorial::Evidence::documented;
        p.entry = entry;
    } else {
        p.evidence = tutorial::Evidence::observed;
        p.where = value != 0 ? open
                             : open +
                                   "; where the value is 0, no entry names what the call "
                                   "returns";
    }
    return p;
}

std::string returned(const char* call, cudaError_t status) {
    return std::string(call) + " returned " + cudaGetErrorName(status);
}

// The entry whose own words tie a property to a call: the cudaIpcGetMemHandle entry (and the
// cudaIpcGetEventHandle entry, in the same words) names ipcEventSupported as the test for IPC.
// The Guide's E.3.1 makes users query the POSIX descriptor attribute before exporting cuMemCreate
// memory: a rule for the user (必須), which promises no export where the value is 1.
const tutorial::Entry ipc_test{"Runtime API reference: cudaIpcGetMemHandle",
                               "cudaDeviceGetAttribute cudaDevAttrIpcEventSupport", "can"};

std::string vmm_seen(const Found& f) {
    if (!f.vmm) return "no VMM, so nothing to export";
    if (f.vmm_created != CUDA_SUCCESS) return "cuMemCreate(POSIX_FILE_DESCRIPTOR) refused";
    return f.vmm_exported == CUDA_SUCCESS ? "cuMemExportToShareableHandle gave a descriptor"
                                          : "cuMemExportToShareableHandle refused";
}

}  // namespace

tutorial::Result run_properties(tutorial::Context& ctx) {
    const Found f = walkthrough(ctx.device);
    const bool legacy = f.memory_handle == cudaSuccess && f.event_handle == cudaSuccess;
    const std::vector<Prediction> predictions = {
        predict("unifiedAddressing", f.unified_addressing,
                "legacy IPC can make a handle for cudaMalloc memory",
                f.memory_handle == cudaSuccess, returned("cudaIpcGetMemHandle", f.memory_handle),
                {},
                "the cudaIpcGetMemHandle entry restricts IPC to devices with unified addressing: a "
                "condition, which promises nothing where the value is 1"),
        predict("ipcEventSupported", f.ipc_event_supported,
                "legacy IPC works: a memory handle and an event handle", legacy,
                returned("cudaIpcGetMemHandle", f.memory_handle) + ", " +
                    returned("cudaIpcGetEventHandle", f.event_handle),
                ipc_test, "the cudaIpcGetMemHandle entry names this attribute as the test for IPC"),
        predict("memoryPoolsSupported", f.memory_pools_supported,
                "cudaMallocAsync allocates from the device's pool",
                f.pool_allocation == cudaSuccess, returned("cudaMallocAsync", f.pool_allocation),
                {},
                "the cudaDevAttrMemoryPoolsSupported entry says \"Device supports using the "
                "cudaMallocAsync and cudaMemPool family of APIs\", in no word of a rule (must, "
                "will, can)"),
        predict("handleTypePosixFileDescriptorSupported", f.posix_fd_supported,
                "VMM memory can be exported as a file descriptor",
                f.vmm && f.vmm_created == CUDA_SUCCESS && f.vmm_exported == CUDA_SUCCESS,
                vmm_seen(f), {},
                "the Guide's E.3.1 says users must (必須) query this attribute before exporting "
                "cuMemCreate memory: a rule for the user, which promises nothing where the value "
                "is 1"),
    };
    return tutorial::check_predictions(ctx, predictions);
}

TUTORIAL_SECTION(properties, run_properties);
