// Section accessed_by_peer (2 or more GPUs): managed data lives on GPU 1 and GPU 0 reads it. Do
// its page faults pull the pages over, or, with cudaMemAdviseSetAccessedBy(GPU 0), does it read
// them in place over the link, leaving them on GPU 1? Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 05_prefetch_advise/accessed_by_peer.cu common/standalone.cu
//       -o build/accessed_by_peer  (on the same line)
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. accessed_by_peer.cu ../common/standalone.cu
//       -o ../build/accessed_by_peer)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>

namespace {

constexpr std::uint32_t seed = 43;
constexpr int reader = 0;  // the GPU that reads
constexpr int owner = 1;   // the GPU the data is prefetched to

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
// Without the advice ([0]) and with AccessedBy(GPU 0) ([1]): GPU 0's two reads, then GPU 1's.
constexpr tutorial::Step reads[2][3] = {
    {{"no advice: GPU 0 reads"}, {"no advice: GPU 0 reads again"}, {"no advice: then GPU 1 reads"}},
    {{"AccessedBy(GPU 0): GPU 0 reads"},
     {"AccessedBy(GPU 0): GPU 0 reads again"},
     {"AccessedBy(GPU 0): then GPU 1 reads"}},
};

// What the walkthrough found: whether AccessedBy listed GPU 0, without and with the advice
// ([advise]); sums read wrong.
struct Found {
    bool listed[2] = {};
    std::size_t wrong = 0;
};

// Defined below the walkthrough:
std::uint32_t* data_on_owner(std::size_t count, bool advise);
bool listed_as_accessed_by(const void* data, std::size_t bytes, int device);
std::size_t read_on(int device, const tutorial::Step& step, const std::uint32_t* data,
                    std::size_t count, std::uint64_t expected, unsigned long long* sum);

Found walkthrough(std::size_t bytes) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    unsigned long long* sums[2] = {};  // device memory on GPU 0 and on GPU 1
    for (int g : {reader, owner}) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMalloc(&sums[g], sizeof *sums[g]));
        CUDA_CHECK(cudaMemset(sums[g], 0, sizeof *sums[g]));
    }
    const std::uint64_t expected = pattern_sum(count, seed);
    Found found;
    for (const bool advise : {false, true}) {
        std::uint32_t* data = data_on_owner(count, advise);
        found.listed[advise] = listed_as_accessed_by(data, bytes, reader);
        // GPU 0 reads twice: without the advice its first read faults the pages over, and the
        // second finds them local; with it both read over the link. Then GPU 1 reads.
        found.wrong += read_on(reader, reads[advise][0], data, count, expected, sums[reader]);
        found.wrong += read_on(reader, reads[advise][1], data, count, expected, sums[reader]);
        found.wrong += read_on(owner, reads[advise][2], data, count, expected, sums[owner]);
        CUDA_CHECK(cudaFree(data));
    }
    for (int g : {reader, owner}) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaFree(sums[g]));
    }
    CUDA_CHECK(cudaSetDevice(reader));
    return found;
}

// Step 1. The CPU writes the data and it is prefetched to GPU `owner`. AccessedBy(reader) asks
// that GPU `reader` keep a mapping of it wherever it lives, where one can be made (here through
// peer access): its kernels then read it over the link instead of faulting it over, and the data
// stays on the owner (the cudaMemAdvise entry: the advice itself moves nothing), unless the GPU's
// access counters move hot pages (the Programming Guide, N.1.8).
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

// Step 3. GPU `device` reads all of the data, as the step `step`. Returns 1 if its sum was not
// `expected`. `sum` is device memory on that GPU.
std::size_t read_on(int device, const tutorial::Step& step, const std::uint32_t* data,
                    std::size_t count, std::uint64_t expected, unsigned long long* sum) {
    CUDA_CHECK(cudaSetDevice(device));
    {
        const tutorial::During during(step);
        sum_on_device_async(data, count, sum, nullptr);
    }
    unsigned long long total = 0;
    CUDA_CHECK(cudaMemcpy(&total, sum, sizeof total, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    return total != expected;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    int gpus = 0;
    CUDA_CHECK(cudaGetDeviceCount(&gpus));
    if (gpus < 2) {
        std::printf("SKIP: accessed_by_peer: needs 2 GPUs; this machine has %d\n", gpus);
        return 77;  // as the course says a missing GPU
    }
    const std::size_t bytes = std::size_t{256} << 20;
    walkthrough(std::size_t{1} << 20);  // a warm-up: the first launches load the kernel
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    Found found;
    std::size_t wrong = 0;
    for (int round = 0; round < 3; ++round) {  // three rounds: the answer is their medians
        found = walkthrough(bytes);
        wrong += found.wrong;
    }
    times.print();
    std::printf(
        "AccessedBy lists GPU 0: %s with the advice, %s without; %zu sums wrong in the 3 "
        "rounds\n",
        found.listed[1] ? "yes" : "no", found.listed[0] ? "yes" : "no", wrong);
    // The card's number: GPU 0's first read by faults against with the advice, then GPU 1's
    // read after each, as rates: GB = 1e9 bytes over the kernel's time.
    const auto gbps = [&](const tutorial::Step& step) {
        return static_cast<double>(bytes) / 1e9 / (times.median_ms(step) / 1e3);
    };
    std::printf(
        "256 MiB: %.3gx faster with AccessedBy(GPU 0) (%.1f against %.1f GB/s); GPU 1 "
        "then read the data at %.1f GB/s, against %.1f after GPU 0's faults had taken "
        "it\n",
        gbps(reads[1][0]) / gbps(reads[0][0]), gbps(reads[1][0]), gbps(reads[0][0]),
        gbps(reads[1][2]), gbps(reads[0][2]));
    return wrong == 0 ? 0 : 1;
}
#endif
