// Section properties: which kind of unified-memory system this is, read from one cudaDeviceProp,
// and managedMemory's promise tried: a kernel writes managed memory, the CPU reads it. (The
// sections concurrency and system_allocator try what two more attributes predict.) Alone:
//   nvcc -std=c++17 -I. 03_managed/properties.cpp common/standalone.cu -o build/properties
//   (or in 03_managed/: nvcc -std=c++17 -I.. properties.cpp ../common/standalone.cu
//       -o ../build/properties)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <cstdio>

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

// What the walkthrough found: the properties, what cudaMallocManaged returned, and how many
// values the CPU read that the kernel had not written.
struct Found {
    cudaDeviceProp prop{};
    cudaError_t managed = cudaSuccess;
    std::size_t wrong = 0;
};

Found walkthrough(int device) {
    Found found;
    // 1. One cudaDeviceProp holds them all: managedMemory, concurrentManagedAccess,
    //    pageableMemoryAccess, pageableMemoryAccessUsesHostPageTables, ...
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaGetDeviceProperties(&found.prop, device));

    // 2. managedMemory = 1: one pointer for CPU and GPU, so a kernel writes and the CPU reads the
    //    same memory. Where it is 0, cudaMallocManaged says so: cudaErrorNotSupported.
    constexpr std::size_t count = 1 << 16;
    std::uint32_t* data = nullptr;
    found.managed = cudaMallocManaged(&data, count * sizeof *data);
    if (found.managed != cudaSuccess) {
        (void)cudaGetLastError();  // a refusal is an answer here, not a failure of the program
        return found;
    }
    fill_on_device(data, count, 9);  // a kernel writes (and the host waits for it)
    found.wrong = mismatches_on_host(data, count, 9);
    CUDA_CHECK(cudaFree(data));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const Found found = walkthrough(0);
    const cudaDeviceProp& p = found.prop;
    std::printf(
        "%s: managedMemory %d, concurrentManagedAccess %d, pageableMemoryAccess %d,\n"
        "pageableMemoryAccessUsesHostPageTables %d, directManagedMemAccessFromHost %d\n",
        p.name, p.managedMemory, p.concurrentManagedAccess, p.pageableMemoryAccess,
        p.pageableMemoryAccessUsesHostPageTables, p.directManagedMemAccessFromHost);
    std::printf("This system: %s.\n", unified_memory_kind(p));
    std::printf("cudaMallocManaged: %s; the CPU read %zu values wrong\n",
                cudaGetErrorName(found.managed), found.wrong);
    return 0;
}
#endif
