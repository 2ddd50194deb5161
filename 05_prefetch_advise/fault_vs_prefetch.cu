// Section fault_vs_prefetch: the same data reaching the GPU and coming back by page faults, by
// cudaMemPrefetchAsync, and (the baseline) by cudaMemcpy from pinned memory.
// (checks/fault_vs_prefetch.cu times each way and counts what moved.)
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstddef>
#include <cstdint>

namespace {

// Step 1. Managed memory the CPU writes first: its pages are made in host memory. A kernel that
// now reads them faults them over to the GPU a few at a time, while it waits.
std::uint32_t* managed_written_by_cpu(std::size_t count, std::uint32_t seed) {
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, count * sizeof *data));
    fill_on_host(data, count, seed);
    return data;
}

// Step 2. Move the pages to where they will be used before the first touch, instead of faulting
// them over. CUDA 13: a cudaMemLocation says where to, then flags (0) and the stream the prefetch
// is queued in; the kernel queued after it in that stream finds every page in place.
void prefetch_to_gpu(const void* data, std::size_t bytes, int device, cudaStream_t stream) {
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, stream));
}

// Step 3. Back again: pages a kernel wrote fault back one by one when the CPU reads them, unless
// a prefetch to the host brings them home first.
void prefetch_to_host(const void* data, std::size_t bytes, cudaStream_t stream) {
    const cudaMemLocation host{cudaMemLocationTypeHost, 0};
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, host, 0, stream));
}

// Step 4. The explicit baseline: pinned host memory, device memory, and a cudaMemcpy between them.
struct Explicit {
    std::uint32_t* pinned = nullptr;
    std::uint32_t* device = nullptr;
};

Explicit pinned_and_device(std::size_t count, std::uint32_t seed) {
    Explicit e;
    CUDA_CHECK(cudaMallocHost(&e.pinned, count * sizeof(std::uint32_t)));
    CUDA_CHECK(cudaMalloc(&e.device, count * sizeof(std::uint32_t)));
    fill_on_host(e.pinned, count, seed);
    return e;
}

void copy_to_device(const Explicit& e, std::size_t bytes) {
    CUDA_CHECK(cudaMemcpy(e.device, e.pinned, bytes, cudaMemcpyHostToDevice));
}

void free_explicit(const Explicit& e) {
    CUDA_CHECK(cudaFree(e.device));
    CUDA_CHECK(cudaFreeHost(e.pinned));
}

}  // namespace
