// Section `properties`: what this device can do with page-locked host memory.
#include "common/check.hpp"
#include "common/device.hpp"
#include "sections.hpp"

tutorial::Result run_properties(tutorial::Context& ctx) {
    // cudaDeviceGetAttribute reads one property at a time, as an int.
    const auto attribute = [&](cudaDeviceAttr which) {
        int value = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&value, which, ctx.device));
        return value;
    };
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx.device));
    const std::vector<tutorial::DeviceFact> facts = {
        {"canMapHostMemory", prop.canMapHostMemory, attribute(cudaDevAttrCanMapHostMemory),
         "cudaHostAllocMapped memory can be used by kernels (zero-copy)"},
        {"hostRegisterSupported", prop.hostRegisterSupported,
         attribute(cudaDevAttrHostRegisterSupported),
         "cudaHostRegister can pin memory that malloc or new returned"},
        {"hostRegisterReadOnlySupported", prop.hostRegisterReadOnlySupported,
         attribute(cudaDevAttrHostRegisterReadOnlySupported),
         "cudaHostRegisterReadOnly is accepted"},
        {"asyncEngineCount", prop.asyncEngineCount, attribute(cudaDevAttrAsyncEngineCount),
         "copy engines: with 2 or more, uploads, downloads and kernels can overlap"},
        {"integrated", prop.integrated, attribute(cudaDevAttrIntegrated),
         "1: the GPU shares the CPU's DRAM, so no PCIe link lies in between"},
    };
    return tutorial::check_device_facts(ctx, "cudaDeviceProp", "cudaDeviceGetAttribute", facts);
}
