// Section `properties`: which kind of unified-memory system this is.
#include "common/check.hpp"
#include "common/report.hpp"
#include "sections.hpp"

using tutorial::device_attribute;

namespace {

// The attributes sort systems into a few families that behave very differently.
const char* unified_memory_kind(const cudaDeviceProp& prop) {
    if (!prop.managedMemory) return "no managed memory at all";
    if (prop.pageableMemoryAccess && prop.pageableMemoryAccessUsesHostPageTables) {
        return "hardware coherent: the GPU uses the CPU's page tables (e.g. Grace Hopper);\n"
               "even malloc memory works in kernels";
    }
    if (prop.pageableMemoryAccess) {
        return "HMM: the driver mirrors the CPU's page tables in software;\n"
               "malloc memory works in kernels";
    }
    if (prop.concurrentManagedAccess) {
        return "managed memory with on-demand paging: pages migrate on first touch and\n"
               "CPU and GPU may access them concurrently; malloc memory does NOT work in kernels";
    }
    return "limited managed memory (Windows, WSL, Jetson): the GPU owns all managed memory\n"
           "while any kernel runs, and a CPU access then is a segmentation fault";
}

}  // namespace

tutorial::Result run_properties(tutorial::Context& ctx) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx.device));
    const std::vector<tutorial::DeviceFact> facts = {
        {"managedMemory", prop.managedMemory,
         device_attribute(ctx.device, cudaDevAttrManagedMemory),
         "cudaMallocManaged and __managed__ work"},
        {"concurrentManagedAccess", prop.concurrentManagedAccess,
         device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess),
         "the CPU may touch managed memory while kernels run"},
        {"pageableMemoryAccess", prop.pageableMemoryAccess,
         device_attribute(ctx.device, cudaDevAttrPageableMemoryAccess),
         "kernels may dereference plain malloc/new memory"},
        {"pageableMemoryAccessUsesHostPageTables", prop.pageableMemoryAccessUsesHostPageTables,
         device_attribute(ctx.device, cudaDevAttrPageableMemoryAccessUsesHostPageTables),
         "...through the CPU's own page tables (hardware coherence)"},
        {"directManagedMemAccessFromHost", prop.directManagedMemAccessFromHost,
         device_attribute(ctx.device, cudaDevAttrDirectManagedMemAccessFromHost),
         "the CPU reads GPU-resident managed memory without migrating it"},
        {"hostNativeAtomicSupported", prop.hostNativeAtomicSupported,
         device_attribute(ctx.device, cudaDevAttrHostNativeAtomicSupported),
         "GPU atomics on host memory are native, not emulated"},
    };
    return tutorial::check_device_facts(
        ctx, "cudaDeviceProp", "cudaDeviceGetAttribute", facts,
        std::string("This system: ") + unified_memory_kind(prop) + ".");
}
