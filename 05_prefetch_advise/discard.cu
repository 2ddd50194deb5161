// Section discard: dead data still migrates, unless a discard (CUDA 13.0) first says so: then the
// pages may move without their data. (checks/discard.cu times each way, checks what a partial
// discard kept, and counts what moved.)
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

constexpr std::size_t chunk = 2 << 20;  // the partial discard takes every other 2 MiB chunk

// Step 1. Moving pages whose contents nobody will read again. A plain prefetch copies every page;
// a discard first says the contents are no longer needed, which lets the driver move the pages
// without their data. Read a discarded range only after writing it again.
void discard_then_prefetch(void* data, std::size_t bytes, cudaMemLocation to, cudaStream_t stream) {
    void* ranges[] = {data};
    std::size_t sizes[] = {bytes};
    CUDA_CHECK(cudaMemDiscardBatchAsync(ranges, sizes, 1, 0, stream));
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, to, 0, stream));
}

// Step 2. The same in one call (CUDA 13).
void discard_and_prefetch(void* data, std::size_t bytes, cudaMemLocation to, cudaStream_t stream) {
    void* ranges[] = {data};
    std::size_t sizes[] = {bytes};
    std::size_t location_from_range[] = {0};  // the one location applies from range 0 on
    CUDA_CHECK(cudaMemDiscardAndPrefetchBatchAsync(ranges, sizes, 1, &to, location_from_range, 1, 0,
                                                   stream));
}

// Step 3. A partial discard: a kernel writes the whole buffer, every other 2 MiB chunk is
// discarded in one batch, and the whole buffer is prefetched to the CPU. The chunks not given to
// the discard keep their data; what the discarded ones hold now, the cudaMemDiscardBatchAsync
// entry does not say (without the prefetch or a write, a read would be indeterminate).
void discard_every_other_chunk(std::uint32_t* data, std::size_t bytes, std::uint32_t seed,
                               cudaStream_t stream) {
    std::vector<void*> ranges;
    std::vector<std::size_t> sizes;
    for (std::size_t at = chunk; at < bytes; at += 2 * chunk) {
        ranges.push_back(reinterpret_cast<char*>(data) + at);
        sizes.push_back(chunk);
    }
    fill_on_device_async(data, bytes / 4, seed, stream);
    CUDA_CHECK(cudaMemDiscardBatchAsync(ranges.data(), sizes.data(), ranges.size(), 0, stream));
    const cudaMemLocation host{cudaMemLocationTypeHost, 0};
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, host, 0, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace
