// Section write_combined: how fast one CPU thread writes and reads write-combined memory, ordinary
// pinned memory and pageable memory, and how fast each uploads (checks/write_combined.cpp).
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <cstdint>
#include <cstdlib>

namespace {

struct HostBuffers {
    void* write_combined;
    void* pinned;
    void* pageable;
};

// Step 1. Three kinds of host memory. Write-combined memory bypasses the CPU's caches: writes are
// gathered and sent out in bursts, reads go all the way to memory every time.
HostBuffers allocate_host_buffers(std::size_t bytes) {
    HostBuffers b{nullptr, nullptr, std::malloc(bytes)};
    CUDA_CHECK(cudaHostAlloc(&b.write_combined, bytes, cudaHostAllocWriteCombined));
    CUDA_CHECK(cudaMallocHost(&b.pinned, bytes));
    return b;
}

void free_host_buffers(const HostBuffers& b) {
    std::free(b.pageable);
    CUDA_CHECK(cudaFreeHost(b.pinned));
    CUDA_CHECK(cudaFreeHost(b.write_combined));
}

// Step 2. What each is for: the CPU writes it, then the copy engine uploads it.
void upload(std::uint32_t* device, const void* host, std::size_t bytes) {
    CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
}

// Step 3. The CPU writes every element, then reads every element back (a sum), then the buffer
// is uploaded: a host timer for the CPU's work, events for the copy; 1 warm-up, then the median
// of `runs`.
struct Speeds {
    double write_gbps;  // the CPU writing the buffer
    double read_gbps;   // the CPU reading it back
    double copy_gbps;   // cudaMemcpy of the buffer to the device
    std::uint64_t sum;  // what the CPU read
};

Speeds measure(std::uint32_t* data, std::uint32_t* device, std::size_t count, int runs,
               std::uint32_t pattern_seed) {
    const std::size_t bytes = count * sizeof *data;
    const double write_ms = tutorial::median_ms(1, runs, [&] {
        tutorial::HostTimer timer;
        fill_on_host(data, count, pattern_seed);
        return timer.elapsed_ms();
    });
    std::uint64_t sum = 0;
    const double read_ms = tutorial::median_ms(1, runs, [&] {
        tutorial::HostTimer timer;
        sum = sum_on_host(data, count);  // the CPU reads every element
        return timer.elapsed_ms();
    });
    const double copy_ms = tutorial::median_event_ms(1, runs, [&] { upload(device, data, bytes); });
    return {tutorial::gb_per_s(bytes, write_ms), tutorial::gb_per_s(bytes, read_ms),
            tutorial::gb_per_s(bytes, copy_ms), sum};
}

}  // namespace
