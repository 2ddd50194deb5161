// Section `properties`: what this device offers for sharing memory and events between processes.
#include "common/check.hpp"
#include "common/device.hpp"
#include "sections.hpp"

using tutorial::driver_attribute;

tutorial::Result run_properties(tutorial::Context& ctx) {
    // cudaDeviceGetAttribute reads one property at a time, as an int.
    const auto attribute = [&](cudaDeviceAttr which) {
        int value = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&value, which, ctx.device));
        return value;
    };
    const std::vector<tutorial::DeviceFact> facts = {
        {"unifiedAddressing", attribute(cudaDevAttrUnifiedAddressing),
         driver_attribute(ctx.device, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING),
         "cudaIpcGetMemHandle and cudaIpcOpenMemHandle need UVA"},
        {"ipcEventSupported", attribute(cudaDevAttrIpcEventSupport),
         driver_attribute(ctx.device, CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED),
         "events can be shared with cudaIpcGetEventHandle"},
        {"memoryPoolsSupported", attribute(cudaDevAttrMemoryPoolsSupported),
         driver_attribute(ctx.device, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED),
         "cudaMallocAsync pools, which can be exported too"},
    };
    const int fd_handles = driver_attribute(
        ctx.device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
    return tutorial::check_device_facts(
        ctx, "cudaDeviceGetAttribute", "cuDeviceGetAttribute", facts,
        fd_handles ? "cuMemCreate allocations can also be exported as POSIX file descriptors\n"
                     "(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 1)."
                   : "cuMemCreate allocations cannot be exported as POSIX file descriptors here.");
}
