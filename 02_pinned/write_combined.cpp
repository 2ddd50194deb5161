// Section write_combined: how fast one CPU thread writes and reads write-combined memory, ordinary
// pinned memory and pageable memory, and how fast each uploads.
// Built alone, from the course's folder (mkdir -p build first), then ./build/write_combined:
//   nvcc -std=c++17 -I. 02_pinned/write_combined.cpp common/standalone.cu -o build/write_combined
//   (or in 02_pinned/: nvcc -std=c++17 -I.. write_combined.cpp ../common/standalone.cu
//       -o ../build/write_combined)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"
#include "common/timing.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched. The
// three kinds of host memory, and the steps each goes through.
struct Kind {
    const char* name;
    tutorial::Step write;   // the CPU writes every element
    tutorial::Step read;    // the CPU reads every element back (a sum)
    tutorial::Step upload;  // cudaMemcpy of the buffer to the device
};
constexpr Kind kinds[3] = {
    {"write-combined",
     {"the CPU writes write-combined memory"},
     {"the CPU reads write-combined memory"},
     {"the copy engine uploads write-combined memory"}},
    {"pinned",
     {"the CPU writes pinned memory"},
     {"the CPU reads pinned memory"},
     {"the copy engine uploads pinned memory"}},
    {"pageable",
     {"the CPU writes pageable memory"},
     {"the CPU reads pageable memory"},
     {"pageable memory uploaded, staged by the driver"}},
};

// What each buffer is for: the CPU writes it, the copy engine uploads it. The CPU reads it back
// too, here, to show what that costs. Returns whether the CPU's sum and the upload were right.
bool write_read_upload(const Kind& kind, std::uint32_t* host, std::uint32_t* device,
                       std::size_t count, std::uint32_t seed) {
    {
        const tutorial::During during(kind.write);
        fill_on_host(host, count, seed);
    }
    std::uint64_t sum = 0;
    {
        const tutorial::During during(kind.read);
        sum = sum_on_host(host, count);
    }
    {
        const tutorial::During during(kind.upload);
        CUDA_CHECK(cudaMemcpy(device, host, count * sizeof *host, cudaMemcpyHostToDevice));
    }
    return sum == pattern_sum(count, seed) && mismatches_on_device(device, count, seed) == 0;
}

// Returns how many of the three buffers came through right.
int walkthrough(std::size_t bytes) {
    // 1. Three kinds of host memory. Write-combined memory bypasses the CPU's caches: writes
    //    are gathered and sent out in bursts, reads go all the way to memory every time.
    void* write_combined = nullptr;
    CUDA_CHECK(cudaHostAlloc(&write_combined, bytes, cudaHostAllocWriteCombined));
    void* pinned = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    void* pageable = std::malloc(bytes);
    std::memset(pageable, 0, bytes);  // the OS supplies its pages at the first write: now
    std::uint32_t* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));

    // 2. Each in turn: the CPU writes it, reads it back, and it is uploaded.
    void* const hosts[3] = {write_combined, pinned, pageable};
    const std::size_t count = bytes / sizeof(std::uint32_t);
    int right = 0;
    for (int k = 0; k < 3; ++k)
        right += write_read_upload(kinds[k], static_cast<std::uint32_t*>(hosts[k]), device, count,
                                   7 + k);

    CUDA_CHECK(cudaFree(device));
    std::free(pageable);
    CUDA_CHECK(cudaFreeHost(pinned));
    CUDA_CHECK(cudaFreeHost(write_combined));
    return right;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    constexpr std::size_t bytes = std::size_t{64} << 20;
    int right = 0;
    for (int round = 0; round < 5; ++round) right += walkthrough(bytes);
    times.print();
    std::printf("64 MiB written, read back and uploaded from each of 3 kinds, 5 times: %d of 15 "
                "came through right\n",
                right);
    // The answer: how fast the CPU reads write-combined memory against ordinary pinned memory.
    const double wc_gbps = tutorial::gb_per_s(bytes, times.median_host_ms(kinds[0].read));
    const double pinned_gbps = tutorial::gb_per_s(bytes, times.median_host_ms(kinds[1].read));
    std::printf("64 MiB: the CPU read write-combined memory at %.2f GB/s against %.2f for "
                "ordinary pinned memory: %.0f%% of its speed\n",
                wc_gbps, pinned_gbps, 100.0 * wc_gbps / pinned_gbps);
    return right == 15 ? 0 : 1;
}
#endif
