// Section prefetch_batch: many separate managed ranges to one GPU: a prefetch call per range, one
// cudaMemPrefetchBatchAsync (CUDA 13.0), or one prefetch of the span; and one batch sending ranges
// to two places. (checks/prefetch_batch.cu times the three, checks where each range went.)
#include "common/check.hpp"

#include <cstddef>
#include <vector>

namespace {

constexpr std::size_t range_bytes = 64 << 10;  // each range; ranges lie 128 KiB apart
constexpr std::size_t stride = 2 * range_bytes;

struct Ranges {
    std::vector<void*> pointers;
    std::vector<std::size_t> sizes;
};

// Step 1. `count` ranges of range_bytes, one every `stride` bytes of one allocation.
Ranges make_ranges(char* base, std::size_t count) {
    Ranges r;
    for (std::size_t i = 0; i < count; ++i) {
        r.pointers.push_back(base + i * stride);
        r.sizes.push_back(range_bytes);
    }
    return r;
}

// Step 2. The ranges to one GPU, three ways: a prefetch call per range, one batch call for all of
// them (CUDA 13), or one call over the whole span, gaps included.
enum Way { loop, batch, span, ways };

void prefetch(Way way, Ranges& r, int device, cudaStream_t stream) {
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    if (way == loop) {
        for (std::size_t i = 0; i < r.pointers.size(); ++i) {
            CUDA_CHECK(cudaMemPrefetchAsync(r.pointers[i], r.sizes[i], gpu, 0, stream));
        }
    }
    if (way == batch) {
        cudaMemLocation to[] = {gpu};
        std::size_t from_range[] = {0};  // to[0] applies from range 0 on
        CUDA_CHECK(cudaMemPrefetchBatchAsync(r.pointers.data(), r.sizes.data(), r.pointers.size(),
                                             to, from_range, 1, 0, stream));
    }
    if (way == span) {
        CUDA_CHECK(cudaMemPrefetchAsync(r.pointers[0], r.pointers.size() * stride, gpu, 0, stream));
    }
}

// Step 3. One batch, two places: the first half of the ranges to the GPU, the rest to the CPU.
// prefetchLocIdxs says from which range on each location applies.
void prefetch_halves(Ranges& r, int device, cudaStream_t stream) {
    const std::size_t count = r.pointers.size();
    cudaMemLocation to[] = {{cudaMemLocationTypeDevice, device}, {cudaMemLocationTypeHost, 0}};
    std::size_t from_range[] = {0, count / 2};  // to[1] applies from range count/2 on
    CUDA_CHECK(cudaMemPrefetchBatchAsync(r.pointers.data(), r.sizes.data(), count, to, from_range,
                                         2, 0, stream));
}

// Step 4. Where each range was last prefetched to: a device ordinal, -1 for the CPU, or -2
// (cudaInvalidDeviceId) where its pages were not all last sent to one place.
std::vector<int> last_locations(const Ranges& r) {
    std::vector<int> at;
    for (std::size_t i = 0; i < r.pointers.size(); ++i) {
        int last = -2;
        CUDA_CHECK(cudaMemRangeGetAttribute(&last, sizeof last,
                                            cudaMemRangeAttributeLastPrefetchLocation,
                                            r.pointers[i], r.sizes[i]));
        at.push_back(last);
    }
    return at;
}

}  // namespace
