// Checks of section properties: runs the walkthrough of ../properties.cpp; each property predicts
// that its way of sharing works (or is refused), and the table sets the prediction against what
// the call returned.
#include "07_ipc/properties.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/predictions.hpp"

#include <string>

using tutorial::Prediction;

namespace {

// The behaviour a value predicts. Where the value is 1 and `at_one` is documented, `entry` names
// the entry that states the behaviour for that value in its own words, and the prediction is
// judged; otherwise (a value of 0, or an entry that only sets a condition) it is what this driver
// did: the attribute entries say what is supported and name no error for what is not. `open`
// says what the reference leaves open.
Prediction predict(const char* property, int value, const char* works, bool worked,
                   const std::string& seen, tutorial::Evidence at_one, const tutorial::Entry& entry,
                   const std::string& open) {
    Prediction p{property, value, value ? works : "the call is refused", worked == (value != 0),
                 seen};
    if (value != 0 && at_one == tutorial::Evidence::documented) {
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

// The entry whose own words tie a property's value 1 to a call: the cudaIpcGetMemHandle entry
// (and the cudaIpcGetEventHandle entry, in the same words) names ipcEventSupported as the test for
// IPC. The attribute entries of memoryPoolsSupported and of the POSIX descriptor handle type say,
// in the present tense, what a device with the value 1 supports, naming the calls: a promise.
const tutorial::Entry ipc_test{"Runtime API reference: cudaIpcGetMemHandle",
                               "cudaDeviceGetAttribute cudaDevAttrIpcEventSupport", "can"};
const tutorial::Entry pools_supported{"Runtime API reference: cudaDevAttrMemoryPoolsSupported",
                                      "cudaMallocAsync cudaMemPool", "supports"};
const tutorial::Entry posix_fd_supported{
    "Driver API reference: CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED",
    "cuMemExportToShareableHandle cuMemCreate", "supports"};

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
                tutorial::Evidence::observed, {},
                "the cudaIpcGetMemHandle entry restricts IPC to devices with unified addressing: a "
                "condition, which promises nothing where the value is 1"),
        predict("ipcEventSupported", f.ipc_event_supported,
                "legacy IPC works: a memory handle and an event handle", legacy,
                returned("cudaIpcGetMemHandle", f.memory_handle) + ", " +
                    returned("cudaIpcGetEventHandle", f.event_handle),
                tutorial::Evidence::documented, ipc_test,
                "the cudaIpcGetMemHandle entry names this attribute as the test for IPC"),
        predict("memoryPoolsSupported", f.memory_pools_supported,
                "cudaMallocAsync allocates from the device's pool",
                f.pool_allocation == cudaSuccess, returned("cudaMallocAsync", f.pool_allocation),
                tutorial::Evidence::documented, pools_supported,
                "the cudaDevAttrMemoryPoolsSupported entry says a device with the value 1 "
                "supports cudaMallocAsync and the cudaMemPool calls"),
        predict("handleTypePosixFileDescriptorSupported", f.posix_fd_supported,
                "VMM memory can be exported as a file descriptor",
                f.vmm && f.vmm_created == CUDA_SUCCESS && f.vmm_exported == CUDA_SUCCESS,
                vmm_seen(f), tutorial::Evidence::documented, posix_fd_supported,
                "the CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED entry says a "
                "device with the value 1 supports exporting cuMemCreate memory so requested with "
                "cuMemExportToShareableHandle"),
    };
    return tutorial::check_predictions(ctx, predictions);
}

TUTORIAL_SECTION(properties, run_properties);
