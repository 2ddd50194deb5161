// Section `properties`: what this device can do with page-locked host memory.
#include "common/check.hpp"
#include "common/report.hpp"
#include "sections.hpp"

using tutorial::device_attribute;

tutorial::Result run_properties(tutorial::Context& ctx) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx.device));
    const std::vector<tutorial::DeviceFact> facts = {
        {"canMapHostMemory", prop.canMapHostMemory,
         device_attribute(ctx.device, cudaDevAttrCanMapHostMemory),
         "cudaHostAllocMapped memory can be used by kernels (zero-copy)"},
        {"hostRegisterSupported", prop.hostRegisterSupported,
         device_attribute(ctx.device, cudaDevAttrHostRegisterSupported),
         "cudaHostRegister can pin memory that malloc or new returned"},
        {"hostRegisterReadOnlySupported", prop.hostRegisterReadOnlySupported,
         device_attribute(ctx.device, cudaDevAttrHostRegisterReadOnlySupported),
         "cudaHostRegisterReadOnly is accepted"},
        {"asyncEngineCount", prop.asyncEngineCount,
         device_attribute(ctx.device, cudaDevAttrAsyncEngineCount),
         "copy engines: with 2 or more, uploads, downloads and kernels can overlap"},
        {"integrated", prop.integrated, device_attribute(ctx.device, cudaDevAttrIntegrated),
         "1: the GPU shares the CPU's DRAM, so no PCIe link lies in between"},
    };
    return tutorial::check_device_facts(ctx, "cudaDeviceProp", "cudaDeviceGetAttribute", facts);
}
