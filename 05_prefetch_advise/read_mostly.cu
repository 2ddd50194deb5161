// Section read_mostly: cudaMemAdviseSetReadMostly lets the CPU and the GPU each keep a read-only
// copy of the same pages, so that taking turns reading them moves nothing; a write drops every
// copy but the writer's. (checks/read_mostly.cu times the appendix's loop and counts the moves.)
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

// Step 1. ReadMostly: the pages may be duplicated, read-only, on every processor that reads
// them. The location argument is ignored for this advice: it is about the range, not a device.
void advise_read_mostly(void* data, std::size_t bytes, int device) {
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetReadMostly, gpu));
}

// Step 2. The Unified Memory appendix's outer loop step: the CPU writes the data, then a prefetch
// to every device. With ReadMostly these make read-only copies on each device instead of moving
// the data away from the CPU, so both sides then read it locally.
void write_then_prefetch(std::uint32_t* data, std::size_t count, std::uint32_t seed,
                         const std::vector<int>& devices) {
    fill_on_host(data, count, seed);
    for (int device : devices) {
        const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
        CUDA_CHECK(cudaMemPrefetchAsync(data, count * sizeof *data, gpu, 0, nullptr));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
}

// Step 3. What cudaMemRangeGetAttribute says about the advice: 1 while ReadMostly is set on the
// range. A write drops the copies, not the advice.
int read_mostly_attribute(const void* data, std::size_t bytes) {
    int value = 0;
    CUDA_CHECK(cudaMemRangeGetAttribute(&value, sizeof value, cudaMemRangeAttributeReadMostly, data,
                                        bytes));
    return value;
}

}  // namespace
