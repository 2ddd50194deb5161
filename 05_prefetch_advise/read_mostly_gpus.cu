// Section read_mostly_gpus (2 or more GPUs): the Unified Memory appendix's ReadMostly loop as
// written there, prefetching to every GPU: with the advice each GPU keeps a read-only copy.
// (checks/read_mostly_gpus.cu times every GPU's reads, and a write that drops the copies.)
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstddef>
#include <cstdint>

namespace {

constexpr std::uint32_t seed = 41;

// Step 1. A managed buffer, with or without ReadMostly. The location is ignored for this advice:
// it is about the range, not a device.
std::uint32_t* allocate(std::size_t bytes, bool read_mostly) {
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    if (read_mostly) {
        const cudaMemLocation gpu0{cudaMemLocationTypeDevice, 0};
        CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetReadMostly, gpu0));
    }
    return data;
}

// Where cudaMemRangeGetAttribute says the range was last prefetched: a device ordinal, or
// cudaCpuDeviceId for the host.
int last_prefetch_location(const void* data, std::size_t bytes) {
    int location = -3;
    CUDA_CHECK(cudaMemRangeGetAttribute(&location, sizeof location,
                                        cudaMemRangeAttributeLastPrefetchLocation, data, bytes));
    return location;
}

// Step 2. The CPU writes the data, then it is prefetched to every GPU in turn. With ReadMostly
// set, each prefetch leaves a read-only copy behind instead of taking the pages away from the GPU
// before. Returns how many prefetches the attribute named right afterwards.
int write_then_prefetch_to_every_gpu(std::uint32_t* data, std::size_t count, int gpus) {
    const std::size_t bytes = count * sizeof *data;
    fill_on_host(data, count, seed);
    int named = 0;
    for (int g = 0; g < gpus; ++g) {
        const cudaMemLocation gpu{cudaMemLocationTypeDevice, g};
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, nullptr));
        CUDA_CHECK(cudaDeviceSynchronize());
        named += last_prefetch_location(data, bytes) == g;
    }
    return named;
}

}  // namespace
