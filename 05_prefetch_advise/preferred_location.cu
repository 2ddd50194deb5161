// Section preferred_location: cudaMemAdviseSetPreferredLocation says where pages should live. It
// moves nothing itself: it changes what the next fault does, and a prefetch still overrides it.
// (checks/preferred_location.cu times two reads after each set-up and counts what moved.)
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstddef>
#include <cstdint>

namespace {

enum class Prefetch { none, to_gpu, to_host };

// One case: whether a preferred location is set and where, who writes the data first, whether
// a prefetch follows, and who reads it then.
struct Case {
    const char* name;
    bool prefer;                // set a preferred location at all
    cudaMemLocation preferred;  // where
    bool gpu_writes_first;      // else the CPU writes the data first
    Prefetch prefetch;          // a prefetch after the writes
    bool gpu_reads;             // else the CPU reads
};

// Step 1. One case's set-up on a fresh managed buffer: the preferred location (if the case sets
// one), the first writes, then a prefetch (if any). Advice is a hint about where the pages should
// live; it does not move them by itself.
void set_up(const Case& c, std::uint32_t* data, std::size_t count, std::uint32_t seed, int device) {
    const std::size_t bytes = count * sizeof *data;
    if (c.prefer) {
        CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetPreferredLocation, c.preferred));
    }
    if (c.gpu_writes_first) {
        fill_on_device(data, count, seed);
    } else {
        fill_on_host(data, count, seed);
    }
    if (c.prefetch != Prefetch::none) {
        const cudaMemLocation to = c.prefetch == Prefetch::to_gpu
                                       ? cudaMemLocation{cudaMemLocationTypeDevice, device}
                                       : cudaMemLocation{cudaMemLocationTypeHost, 0};
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, to, 0, nullptr));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
}

// Step 2. Reading the state back: PreferredLocation and LastPrefetchLocation answer with one
// int, a device ordinal, cudaCpuDeviceId (-1) for the host or cudaInvalidDeviceId (-2) for none.
int location_attribute(const void* data, std::size_t bytes, cudaMemRangeAttribute attribute) {
    int location = 0;
    CUDA_CHECK(cudaMemRangeGetAttribute(&location, sizeof location, attribute, data, bytes));
    return location;
}

}  // namespace
