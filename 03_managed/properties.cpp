// Section properties: which kind of unified-memory system this is, read from one cudaDeviceProp.
// (checks/properties.cpp tries what each attribute predicts, in a child process where it can
// crash.)
#include "common/check.hpp"

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
               "CPU and GPU may access them concurrently; nothing promises kernels malloc memory";
    }
    return "limited managed memory (Windows, WSL, Jetson): the GPU owns all managed memory\n"
           "from a kernel launch until the host synchronizes, and a CPU access then is a\n"
           "segmentation fault";
}

// Where they come from: one cudaDeviceProp holds them all.
cudaDeviceProp unified_memory_properties(int device) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    return prop;  // managedMemory, concurrentManagedAccess, pageableMemoryAccess, ...
}

}  // namespace
