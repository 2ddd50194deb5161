// Section prefetch_between_gpus (2 or more GPUs): cudaMemPrefetchAsync moves managed pages from
// one GPU straight to another, beside a peer copy of device memory and a pinned upload.
// (checks/prefetch_between_gpus.cu times each move and checks the data after it.)
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstddef>
#include <cstdint>

namespace {

constexpr std::uint32_t seed = 47;

// Step 1. Managed data moves from GPU to GPU with the same call that moves it from the host: only
// the location differs. Queued on the destination's legacy stream.
void prefetch_to_gpu(std::uint32_t* data, std::size_t bytes, int to) {
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, to};
    CUDA_CHECK(cudaSetDevice(to));
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, nullptr));
}

// Step 2. Where the range was last asked to go: the destination's device ordinal.
int last_prefetch_location(const void* data, std::size_t bytes) {
    int location = -3;
    CUDA_CHECK(cudaMemRangeGetAttribute(&location, sizeof location,
                                        cudaMemRangeAttributeLastPrefetchLocation, data, bytes));
    return location;
}

// Step 3. The baselines: the same bytes as device memory on both GPUs, with peer access from
// GPU 0 to GPU 1, and as pinned host memory.
struct Baselines {
    std::uint32_t* on_0 = nullptr;
    std::uint32_t* on_1 = nullptr;
    std::uint32_t* host = nullptr;
};

Baselines allocate_baselines(std::size_t count) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    Baselines b;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMalloc(&b.on_0, bytes));
    fill_on_device(b.on_0, count, seed);
    CUDA_CHECK(cudaDeviceEnablePeerAccess(1, 0));
    CUDA_CHECK(cudaSetDevice(1));
    CUDA_CHECK(cudaMalloc(&b.on_1, bytes));
    CUDA_CHECK(cudaMallocHost(&b.host, bytes));
    return b;
}

// A peer copy GPU 0 -> GPU 1, and an upload to GPU 1, each on GPU 1's legacy stream.
void peer_copy(const Baselines& b, std::size_t bytes) {
    CUDA_CHECK(cudaMemcpyPeerAsync(b.on_1, 1, b.on_0, 0, bytes, nullptr));
}

void upload(const Baselines& b, std::size_t bytes) {
    CUDA_CHECK(cudaMemcpyAsync(b.on_1, b.host, bytes, cudaMemcpyHostToDevice, nullptr));
}

void free_baselines(const Baselines& b) {
    CUDA_CHECK(cudaFreeHost(b.host));
    CUDA_CHECK(cudaFree(b.on_1));
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaDeviceDisablePeerAccess(1));
    CUDA_CHECK(cudaFree(b.on_0));
}

}  // namespace
