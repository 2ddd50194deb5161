// Section `properties`: is this a UVA system, and can kernels reach host memory?
#include "common/check.hpp"
#include "common/report.hpp"
#include "sections.hpp"

using tutorial::device_attribute;

tutorial::Result run_properties(tutorial::Context& ctx) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx.device));
    const std::vector<tutorial::DeviceFact> facts = {
        {"unifiedAddressing", prop.unifiedAddressing,
         device_attribute(ctx.device, cudaDevAttrUnifiedAddressing),
         "host and device allocations share one 64-bit address space"},
        {"canMapHostMemory", prop.canMapHostMemory,
         device_attribute(ctx.device, cudaDevAttrCanMapHostMemory),
         "kernels may read and write pinned host memory directly"},
        {"canUseHostPointerForRegisteredMem", prop.canUseHostPointerForRegisteredMem,
         device_attribute(ctx.device, cudaDevAttrCanUseHostPointerForRegisteredMem),
         "cudaHostRegister'ed memory has the same address on the device"},
    };
    return tutorial::check_device_facts(
        ctx, "cudaDeviceProp", "cudaDeviceGetAttribute", facts,
        prop.unifiedAddressing
            ? "UVA is on: any pointer can be asked where it lives, and cudaMemcpyDefault\n"
              "can work out the direction of a copy from the addresses alone."
            : "UVA is off: every copy must name its direction explicitly.");
}
