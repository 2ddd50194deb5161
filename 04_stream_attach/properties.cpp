// Section `properties`: does this device need stream attach to let the CPU work during kernels?
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
        {"managedMemory", prop.managedMemory, attribute(cudaDevAttrManagedMemory),
         "cudaMallocManaged works"},
        {"concurrentManagedAccess", prop.concurrentManagedAccess,
         attribute(cudaDevAttrConcurrentManagedAccess),
         "0: CPU access during any kernel faults unless the memory is attached elsewhere"},
        {"concurrentKernels", prop.concurrentKernels, attribute(cudaDevAttrConcurrentKernels),
         "kernels from different streams may run at the same time"},
    };
    return tutorial::check_device_facts(ctx, "cudaDeviceProp", "cudaDeviceGetAttribute", facts);
}
