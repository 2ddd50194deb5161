// Section bandwidth: copy speed between device memory and four kinds of host memory, and how a
// copy is timed: events around back-to-back copies, kinds taking turns, warm-up, the median.
// Built alone, from the course's folder (mkdir -p build first), then ./build/bandwidth:
//   nvcc -std=c++17 -I. 02_pinned/bandwidth.cpp common/standalone.cu -o build/bandwidth
//   (or in 02_pinned/: nvcc -std=c++17 -I.. bandwidth.cpp ../common/standalone.cu
//       -o ../build/bandwidth)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// The four kinds of host memory, in the order the walkthrough gives their rates.
constexpr int kinds = 4;
constexpr const char* kind_names[kinds] = {"pageable", "pinned", "write-combined", "registered"};

// What the walkthrough found: GB/s of each kind, both ways, and how many of the 2 x 4 checked
// copies delivered every value.
struct Found {
    double to_device[kinds], to_host[kinds];
    int copies_right;
};

// One sample: events on the legacy default stream around `repeats` copies back to back. The GPU
// stamps each event when it gets there, so the time is the copies' own, not the CPU's.
double copy_ms(void* destination, const void* source, std::size_t bytes, int repeats) {
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start, 0));
    for (int r = 0; r < repeats; ++r)
        CUDA_CHECK(cudaMemcpy(destination, source, bytes, cudaMemcpyDefault));
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return ms / repeats;
}

// GB/s of each host buffer at one size, one direction. Small copies are repeated within a sample
// to move about `bytes_per_sample` (2 to 100 copies); the kinds take turns within each round, so
// a slow spell of a shared machine falls on all of them alike; `warmup` rounds are not counted,
// then the median of `rounds` (GB/s = 1e9 bytes per second).
void median_gbps(void* const (&hosts)[kinds], void* device, bool to_device, std::size_t bytes,
                 std::size_t bytes_per_sample, int warmup, int rounds, double (&gbps)[kinds]) {
    const int repeats = static_cast<int>(std::clamp<std::size_t>(bytes_per_sample / bytes, 2, 100));
    std::vector<double> ms[kinds];
    for (int round = 0; round < warmup + rounds; ++round) {
        for (int k = 0; k < kinds; ++k) {
            const double t = to_device ? copy_ms(device, hosts[k], bytes, repeats)
                                       : copy_ms(hosts[k], device, bytes, repeats);
            if (round >= warmup) ms[k].push_back(t);
        }
    }
    for (int k = 0; k < kinds; ++k) gbps[k] = tutorial::gb_per_s(bytes, tutorial::median(ms[k]));
}

Found walkthrough(std::size_t bytes, int warmup, int rounds, std::size_t bytes_per_sample) {
    Found found{};
    // 1. The four kinds, each allocated with its own call: pageable (malloc), pinned
    //    (cudaMallocHost), write-combined (cudaHostAlloc), and malloc memory pinned in place
    //    (cudaHostRegister). Then every page written once, so that no copy meets a fresh page.
    void* pageable = std::malloc(bytes);
    void* pinned = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    void* write_combined = nullptr;
    CUDA_CHECK(cudaHostAlloc(&write_combined, bytes, cudaHostAllocWriteCombined));
    void* registered = std::malloc(bytes);
    CUDA_CHECK(cudaHostRegister(registered, bytes, cudaHostRegisterDefault));
    void* const hosts[kinds] = {pageable, pinned, write_combined, registered};
    const std::size_t count = bytes / sizeof(std::uint32_t);
    for (void* host : hosts) fill_on_host(static_cast<std::uint32_t*>(host), count, 0);
    void* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));

    // 2. Each kind timed host -> device, then device -> host.
    median_gbps(hosts, device, true, bytes, bytes_per_sample, warmup, rounds, found.to_device);
    median_gbps(hosts, device, false, bytes, bytes_per_sample, warmup, rounds, found.to_host);

    // 3. Each kind's copy checked where it landed: the destination first filled with something
    //    else, so that a copy that did nothing shows.
    std::uint32_t seed = 1;
    for (void* h : hosts) {
        auto* host = static_cast<std::uint32_t*>(h);
        auto* on_device = static_cast<std::uint32_t*>(device);
        fill_on_host(host, count, seed);
        fill_on_device(on_device, count, ~seed);
        CUDA_CHECK(cudaMemcpy(on_device, host, bytes, cudaMemcpyHostToDevice));
        found.copies_right += mismatches_on_device(on_device, count, seed) == 0;
        fill_on_device(on_device, count, seed + 1);
        CUDA_CHECK(cudaMemcpy(host, on_device, bytes, cudaMemcpyDeviceToHost));
        found.copies_right += mismatches_on_host(host, count, seed + 1) == 0;
        seed += 2;
    }

    // 4. Each freed with the call that matches its allocation.
    CUDA_CHECK(cudaFree(device));
    CUDA_CHECK(cudaHostUnregister(registered));
    std::free(registered);
    CUDA_CHECK(cudaFreeHost(write_combined));
    CUDA_CHECK(cudaFreeHost(pinned));
    std::free(pageable);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    for (std::size_t bytes : {std::size_t{4} << 10, std::size_t{1} << 20, std::size_t{64} << 20}) {
        const Found f = walkthrough(bytes, 1, 5, std::size_t{256} << 20);
        if (bytes == std::size_t{4} << 10) std::printf("GB/s     host -> device  device -> host\n");
        std::printf("%zu bytes, %d of %d copies delivered every value:\n", bytes, f.copies_right,
                    2 * kinds);
        for (int k = 0; k < kinds; ++k)
            std::printf("  %-15s %8.1f  %14.1f\n", kind_names[k], f.to_device[k], f.to_host[k]);
    }
    return 0;
}
#endif
