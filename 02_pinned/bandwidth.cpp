// Section bandwidth: copy speed between device memory and four kinds of host memory, and how a
// copy is timed: events around back-to-back copies, kinds taking turns, warm-up, the median.
#include "common/check.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace {

// Step 1. The four kinds of host memory, each allocated with its own call and freed with the
// matching one (chapter 02's `misuse` shows what a mismatch does).
struct HostBuffers {
    void* pageable = nullptr;
    void* pinned = nullptr;
    void* write_combined = nullptr;
    void* registered = nullptr;

    explicit HostBuffers(std::size_t bytes) {
        pageable = std::malloc(bytes);
        CUDA_CHECK(cudaMallocHost(&pinned, bytes));
        CUDA_CHECK(cudaHostAlloc(&write_combined, bytes, cudaHostAllocWriteCombined));
        registered = std::malloc(bytes);  // pinned afterwards, where it is
        CUDA_CHECK(cudaHostRegister(registered, bytes, cudaHostRegisterDefault));
    }
    ~HostBuffers() {
        CUDA_CHECK(cudaHostUnregister(registered));
        std::free(registered);
        CUDA_CHECK(cudaFreeHost(write_combined));
        CUDA_CHECK(cudaFreeHost(pinned));
        std::free(pageable);
    }
    HostBuffers(const HostBuffers&) = delete;
    HostBuffers& operator=(const HostBuffers&) = delete;
};

// Step 2. What is timed: a copy between one of them and device memory, in either direction.
void copy(void* destination, const void* source, std::size_t bytes) {
    CUDA_CHECK(cudaMemcpy(destination, source, bytes, cudaMemcpyDefault));
}

// Step 3. One sample: events on the legacy default stream around `repeats` copies back to back.
// The GPU stamps each event when it gets there, so the time is the copies' own, not the CPU's.
double copy_ms(void* destination, const void* source, std::size_t bytes, int repeats) {
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start, 0));
    for (int r = 0; r < repeats; ++r) copy(destination, source, bytes);
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return ms / repeats;
}

// Step 4. GB/s of each host buffer at one size. Small copies are repeated within a sample to
// move about `bytes_per_round` (2 to 100 copies); the kinds take turns within each round, so a
// slow spell of a shared machine falls on all of them alike; `warmup` rounds are not counted,
// then the median of `rounds` (GB/s = 1e9 bytes per second).
std::vector<double> median_gbps(const std::vector<void*>& hosts, void* device, bool to_device,
                                std::size_t bytes, std::size_t bytes_per_round, int warmup,
                                int rounds) {
    const int repeats = static_cast<int>(std::clamp<std::size_t>(bytes_per_round / bytes, 2, 100));
    std::vector<std::vector<double>> ms(hosts.size());
    for (int round = 0; round < warmup + rounds; ++round) {
        for (std::size_t k = 0; k < hosts.size(); ++k) {
            const double t = to_device ? copy_ms(device, hosts[k], bytes, repeats)
                                       : copy_ms(hosts[k], device, bytes, repeats);
            if (round >= warmup) ms[k].push_back(t);
        }
    }
    std::vector<double> gbps;
    for (const std::vector<double>& m : ms)
        gbps.push_back(tutorial::gb_per_s(bytes, tutorial::median(m)));
    return gbps;
}

}  // namespace
