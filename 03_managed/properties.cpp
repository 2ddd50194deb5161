// Section `properties`: which kind of unified-memory system this is.
#include "common/check.hpp"
#include "common/device.hpp"
#include "sections.hpp"

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
         "cudaMallocManaged and __managed__ work"},
        {"concurrentManagedAccess", prop.concurrentManagedAccess,
         attribute(cudaDevAttrConcurrentManagedAccess),
         "the CPU may touch managed memory while kernels run"},
        {"pageableMemoryAccess", prop.pageableMemoryAccess,
         attribute(cudaDevAttrPageableMemoryAccess),
         "kernels may dereference plain malloc/new memory"},
        {"pageableMemoryAccessUsesHostPageTables", prop.pageableMemoryAccessUsesHostPageTables,
         attribute(cudaDevAttrPageableMemoryAccessUsesHostPageTables),
         "...through the CPU's own page tables (hardware coherence)"},
        {"directManagedMemAccessFromHost", prop.directManagedMemAccessFromHost,
         attribute(cudaDevAttrDirectManagedMemAccessFromHost),
         "the CPU reads GPU-resident managed memory without migrating it"},
        {"hostNativeAtomicSupported", prop.hostNativeAtomicSupported,
         attribute(cudaDevAttrHostNativeAtomicSupported),
         "GPU atomics on host memory are native, not emulated"},
    };
    return tutorial::check_device_facts(
        ctx, "cudaDeviceProp", "cudaDeviceGetAttribute", facts,
        std::string("This system: ") + unified_memory_kind(prop) + ".");
}
