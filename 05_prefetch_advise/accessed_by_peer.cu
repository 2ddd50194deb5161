// Section accessed_by_peer (2 or more GPUs): managed data lives on GPU 1 and GPU 0 reads it: its
// page faults pull the pages over, or, with cudaMemAdviseSetAccessedBy(GPU 0), it reads them in
// place over the link. (checks/accessed_by_peer.cu times the reads both ways.)
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstddef>
#include <cstdint>

namespace {

constexpr std::uint32_t seed = 43;
constexpr int reader = 0;  // the GPU that reads
constexpr int owner = 1;   // the GPU the data is prefetched to

// Step 1. The CPU writes the data and it is prefetched to GPU `owner`. AccessedBy(reader) asks
// that GPU `reader` keep a mapping of it wherever it lives, where one can be made (here through
// peer access): its kernels then read it over the link instead of faulting it over, and the data
// stays on the owner (the cudaMemAdvise entry: the advice itself moves nothing).
std::uint32_t* data_on_owner(std::size_t count, bool advise) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    fill_on_host(data, count, seed);
    if (advise) {
        const cudaMemLocation gpu_reader{cudaMemLocationTypeDevice, reader};
        CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetAccessedBy, gpu_reader));
    }
    const cudaMemLocation gpu_owner{cudaMemLocationTypeDevice, owner};
    CUDA_CHECK(cudaSetDevice(owner));
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu_owner, 0, nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());
    return data;
}

// Step 2. Reading the advice back: the AccessedBy attribute lists the ids of the devices that
// have it on the whole range, the slots left over padded with cudaInvalidDeviceId.
bool listed_as_accessed_by(const void* data, std::size_t bytes, int device) {
    int who[8] = {};
    CUDA_CHECK(
        cudaMemRangeGetAttribute(who, sizeof who, cudaMemRangeAttributeAccessedBy, data, bytes));
    for (int location : who) {
        if (location == device) return true;
    }
    return false;
}

}  // namespace
