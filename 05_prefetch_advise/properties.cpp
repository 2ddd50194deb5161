// Section `properties`: what prefetching and advice can do on this device.
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
         "pages migrate on demand, so prefetching to the GPU pays off"},
        {"pageableMemoryAccess", prop.pageableMemoryAccess,
         attribute(cudaDevAttrPageableMemoryAccess),
         "advice and prefetch also apply to malloc memory"},
        {"directManagedMemAccessFromHost", prop.directManagedMemAccessFromHost,
         attribute(cudaDevAttrDirectManagedMemAccessFromHost),
         "0: a CPU read of GPU-resident pages faults them back to the host"},
        {"hostNativeAtomicSupported", prop.hostNativeAtomicSupported,
         attribute(cudaDevAttrHostNativeAtomicSupported),
         "AccessedBy mappings to host memory keep atomics native"},
    };
    return tutorial::check_device_facts(ctx, "cudaDeviceProp", "cudaDeviceGetAttribute", facts);
}
