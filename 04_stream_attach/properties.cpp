// Section `properties`: does this device need stream attach to let the CPU work during kernels?
#include "common/check.hpp"
#include "common/report.hpp"
#include "sections.hpp"

using tutorial::device_attribute;

tutorial::Result run_properties(tutorial::Context& ctx) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx.device));
    const std::vector<tutorial::DeviceFact> facts = {
        {"managedMemory", prop.managedMemory,
         device_attribute(ctx.device, cudaDevAttrManagedMemory), "cudaMallocManaged works"},
        {"concurrentManagedAccess", prop.concurrentManagedAccess,
         device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess),
         "0: CPU access during any kernel faults unless the memory is attached elsewhere"},
        {"concurrentKernels", prop.concurrentKernels,
         device_attribute(ctx.device, cudaDevAttrConcurrentKernels),
         "kernels from different streams may run at the same time"},
    };
    return tutorial::check_device_facts(ctx, "cudaDeviceProp", "cudaDeviceGetAttribute", facts);
}
