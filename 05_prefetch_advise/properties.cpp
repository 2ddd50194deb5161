// Section `properties`: what prefetching and advice can do on this device.
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
         "pages migrate on demand, so prefetching to the GPU pays off"},
        {"pageableMemoryAccess", prop.pageableMemoryAccess,
         device_attribute(ctx.device, cudaDevAttrPageableMemoryAccess),
         "advice and prefetch also apply to malloc memory"},
        {"directManagedMemAccessFromHost", prop.directManagedMemAccessFromHost,
         device_attribute(ctx.device, cudaDevAttrDirectManagedMemAccessFromHost),
         "0: a CPU read of GPU-resident pages faults them back to the host"},
        {"hostNativeAtomicSupported", prop.hostNativeAtomicSupported,
         device_attribute(ctx.device, cudaDevAttrHostNativeAtomicSupported),
         "AccessedBy mappings to host memory keep atomics native"},
    };
    return tutorial::check_device_facts(ctx, "cudaDeviceProp", "cudaDeviceGetAttribute", facts);
}
