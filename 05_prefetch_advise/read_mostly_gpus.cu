// Section read_mostly_gpus (2+ GPUs): the appendix's ReadMostly loop on every GPU. Without advice
// the pages move to each reader; with it every GPU keeps a copy until GPU 0 writes. Alone:
//   nvcc -std=c++17 -I. 05_prefetch_advise/read_mostly_gpus.cu common/standalone.cu
//       -o build/read_mostly_gpus  (on the same line)
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. read_mostly_gpus.cu ../common/standalone.cu
//       -o ../build/read_mostly_gpus)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr std::uint32_t seed = 41;
constexpr std::uint32_t written_seed = 42;
constexpr int max_gpus = 8;  // the walkthrough takes at most this many: a step each, below

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched. Each
// GPU's read ([g]) without the advice and with it; GPU 0's write, and each other GPU's read
// after it.
constexpr tutorial::Step unadvised_reads[max_gpus] = {
    {"no advice: GPU 0 reads"}, {"no advice: GPU 1 reads"}, {"no advice: GPU 2 reads"},
    {"no advice: GPU 3 reads"}, {"no advice: GPU 4 reads"}, {"no advice: GPU 5 reads"},
    {"no advice: GPU 6 reads"}, {"no advice: GPU 7 reads"},
};
constexpr tutorial::Step advised_reads[max_gpus] = {
    {"ReadMostly: GPU 0 reads"}, {"ReadMostly: GPU 1 reads"}, {"ReadMostly: GPU 2 reads"},
    {"ReadMostly: GPU 3 reads"}, {"ReadMostly: GPU 4 reads"}, {"ReadMostly: GPU 5 reads"},
    {"ReadMostly: GPU 6 reads"}, {"ReadMostly: GPU 7 reads"},
};
constexpr tutorial::Step gpu0_writes{"ReadMostly: GPU 0 writes"};
constexpr tutorial::Step reads_after_write[max_gpus] = {
    // {}: GPU 0 wrote
    {},
    {"after GPU 0 wrote: GPU 1 reads"},
    {"after GPU 0 wrote: GPU 2 reads"},
    {"after GPU 0 wrote: GPU 3 reads"},
    {"after GPU 0 wrote: GPU 4 reads"},
    {"after GPU 0 wrote: GPU 5 reads"},
    {"after GPU 0 wrote: GPU 6 reads"},
    {"after GPU 0 wrote: GPU 7 reads"},
};

// What the walkthrough found: LastPrefetchLocation after the loop, without and with the advice
// ([advised]); values read wrong, and of those, after GPU 0's write.
struct Found {
    int last_prefetch[2] = {cudaInvalidDeviceId, cudaInvalidDeviceId};
    std::size_t wrong = 0, wrong_after_write = 0;
};

// Defined below the walkthrough:
std::size_t write_prefetch_read(std::uint32_t* data, std::size_t count, int gpus, int rounds,
                                bool advised, const std::vector<unsigned long long*>& sums);
std::size_t read_on(const tutorial::Step& step, int g, const std::uint32_t* data, std::size_t count,
                    unsigned long long* sum_on_g, std::uint64_t expected);
int last_prefetch_location(const void* data, std::size_t bytes);

// `gpus`: 2 to max_gpus.
Found walkthrough(std::size_t bytes, int gpus, int rounds) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::vector<unsigned long long*> sums(gpus);  // device memory on each GPU
    for (int g = 0; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMalloc(&sums[g], sizeof *sums[g]));
        CUDA_CHECK(cudaMemset(sums[g], 0, sizeof *sums[g]));
    }
    Found found;
    for (const bool advised : {false, true}) {
        std::uint32_t* data = nullptr;
        CUDA_CHECK(cudaMallocManaged(&data, bytes));
        if (advised) {  // the location is ignored for this advice: it is about the range
            const cudaMemLocation gpu0{cudaMemLocationTypeDevice, 0};
            CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetReadMostly, gpu0));
        }
        // Step 1 (below): the CPU writes, a prefetch to each GPU in turn, rounds of reads.
        found.wrong += write_prefetch_read(data, count, gpus, rounds, advised, sums);
        found.last_prefetch[advised] = last_prefetch_location(data, bytes);
        if (advised) {
            // Step 2. GPU 0 writes: every copy but its own is dropped, so each other GPU's next
            // read faults the new values over.
            CUDA_CHECK(cudaSetDevice(0));
            {
                const tutorial::During during(gpu0_writes);
                fill_on_device(data, count, written_seed);
            }
            for (int g = 1; g < gpus; ++g) {
                found.wrong_after_write += read_on(reads_after_write[g], g, data, count, sums[g],
                                                   pattern_sum(count, written_seed));
                found.wrong_after_write += mismatches_on_device(data, count, written_seed);
            }
            found.wrong += found.wrong_after_write;
        }
        CUDA_CHECK(cudaFree(data));
    }
    for (int g = 0; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaFree(sums[g]));
    }
    CUDA_CHECK(cudaSetDevice(0));
    return found;
}

// Step 1. The appendix's loop on one buffer: the CPU writes it, it is prefetched to every GPU
// in turn (with ReadMostly each prefetch leaves a read-only copy behind instead of taking the
// pages from the GPU before), then `rounds` times each GPU in turn reads all of it. Returns the
// sums read wrong.
std::size_t write_prefetch_read(std::uint32_t* data, std::size_t count, int gpus, int rounds,
                                bool advised, const std::vector<unsigned long long*>& sums) {
    fill_on_host(data, count, seed);
    for (int g = 0; g < gpus; ++g) {
        const cudaMemLocation gpu{cudaMemLocationTypeDevice, g};
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMemPrefetchAsync(data, count * sizeof *data, gpu, 0, nullptr));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    const std::uint64_t expected = pattern_sum(count, seed);
    std::size_t wrong = 0;
    for (int r = 0; r < rounds; ++r) {
        for (int g = 0; g < gpus; ++g) {
            const tutorial::Step& step = advised ? advised_reads[g] : unadvised_reads[g];
            wrong += read_on(step, g, data, count, sums[g], expected);
        }
    }
    return wrong;
}

// The total a summing kernel left in *sum (it waits for the kernel), zeroed for the next one.
std::uint64_t take_sum(unsigned long long* sum) {
    unsigned long long total = 0;
    CUDA_CHECK(cudaMemcpy(&total, sum, sizeof total, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    return total;
}

// GPU g reads all of the data, as the step `step`. Returns 1 if its sum was not `expected`.
std::size_t read_on(const tutorial::Step& step, int g, const std::uint32_t* data, std::size_t count,
                    unsigned long long* sum_on_g, std::uint64_t expected) {
    CUDA_CHECK(cudaSetDevice(g));
    {
        const tutorial::During during(step);
        sum_on_device_async(data, count, sum_on_g, nullptr);
    }
    return take_sum(sum_on_g) != expected;
}

// Where the range was last prefetched to: a device ordinal, or cudaCpuDeviceId for the host.
int last_prefetch_location(const void* data, std::size_t bytes) {
    int location = cudaInvalidDeviceId;
    CUDA_CHECK(cudaMemRangeGetAttribute(&location, sizeof location,
                                        cudaMemRangeAttributeLastPrefetchLocation, data, bytes));
    return location;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    int gpus = 0;
    CUDA_CHECK(cudaGetDeviceCount(&gpus));
    if (gpus < 2) {
        std::printf("SKIP: read_mostly_gpus: needs 2 GPUs; this machine has %d\n", gpus);
        return 77;  // as the course says a missing GPU
    }
    gpus = std::min(gpus, max_gpus);
    walkthrough(std::size_t{1} << 20, gpus, 1);  // a warm-up: the first launches load the kernels
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(std::size_t{256} << 20, gpus, 5);
    times.print();
    std::printf("LastPrefetchLocation after the loop: %d without the advice, %d with it\n",
                found.last_prefetch[0], found.last_prefetch[1]);
    std::printf("%zu values read wrong\n", found.wrong);
    // The card's numbers: the slowest GPU's read without the advice against with it; and the
    // other GPUs' fastest first read after GPU 0's write against their slowest read before it.
    double slowest_without = 0, slowest_with = 0, slowest_before = 0, fastest_after = 1e30;
    for (int g = 0; g < gpus; ++g) {
        slowest_without = std::max(slowest_without, times.median_ms(unadvised_reads[g]));
        slowest_with = std::max(slowest_with, times.median_ms(advised_reads[g]));
        if (g == 0) continue;
        slowest_before = std::max(slowest_before, times.median_ms(advised_reads[g]));
        fastest_after = std::min(fastest_after, times.median_ms(reads_after_write[g]));
    }
    std::printf(
        "256 MiB on %d GPUs: %.3gx faster for the slowest GPU with ReadMostly; after GPU "
        "0's write the other GPUs' next read was %.3gx slower: their copies were "
        "dropped\n",
        gpus, slowest_without / slowest_with, fastest_after / slowest_before);
    return found.wrong == 0 ? 0 : 1;
}
#endif
