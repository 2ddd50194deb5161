// Section prefetch_between_gpus (2 or more GPUs): cudaMemPrefetchAsync moves managed pages from
// one GPU straight to another, with the call that moves them from the host: only the location
// differs. How fast, beside a peer copy of device memory and a pinned upload? Alone:
//   nvcc -std=c++17 -I. 05_prefetch_advise/prefetch_between_gpus.cu common/standalone.cu
//       -o build/prefetch_between_gpus  (on the same line)
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. prefetch_between_gpus.cu
//       ../common/standalone.cu -o ../build/prefetch_between_gpus)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>

namespace {

constexpr std::uint32_t seed = 47;

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step first_prefetch{"the CPU's data prefetched to GPU 0"};
constexpr tutorial::Step to_gpu1{"a prefetch GPU 0 -> GPU 1"};
constexpr tutorial::Step to_gpu0{"a prefetch GPU 1 -> GPU 0"};
constexpr tutorial::Step peer_copy{"the baseline: a peer copy of device memory GPU 0 -> GPU 1"};
constexpr tutorial::Step pinned_upload{"the baseline: an upload from pinned memory to GPU 1"};

// The baselines: the same bytes as device memory on both GPUs, with peer access from GPU 0 to
// GPU 1, and as pinned host memory (step 3, below).
struct Baselines {
    std::uint32_t* on_0 = nullptr;
    std::uint32_t* on_1 = nullptr;
    std::uint32_t* host = nullptr;
};

// What the walkthrough found: prefetches whose destination LastPrefetchLocation named right
// after them, of how many; values wrong where the data arrived.
struct Found {
    int named = 0, prefetches = 0;
    std::size_t wrong = 0;
};

// Defined below the walkthrough:
void prefetch_to_gpu(std::uint32_t* data, std::size_t bytes, int to, const tutorial::Step& step);
int last_prefetch_location(const void* data, std::size_t bytes);
Baselines allocate_baselines(std::size_t count);
void free_baselines(const Baselines& b);

Found walkthrough(std::size_t bytes, int rounds) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    Found found;
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    fill_on_host(data, count, seed);
    prefetch_to_gpu(data, bytes, 0, first_prefetch);
    // 1. GPU 0 -> GPU 1 -> GPU 0, `rounds` times; a kernel checks the data where it arrived.
    for (int r = 0; r < rounds; ++r) {
        for (int to : {1, 0}) {
            prefetch_to_gpu(data, bytes, to, to == 1 ? to_gpu1 : to_gpu0);
            found.named += last_prefetch_location(data, bytes) == to;
            ++found.prefetches;
            found.wrong += mismatches_on_device(data, count, seed);
        }
    }
    CUDA_CHECK(cudaFree(data));
    // 2. The same bytes as device memory: a peer copy GPU 0 -> GPU 1, and an upload to GPU 1,
    //    each on GPU 1's legacy stream.
    const Baselines b = allocate_baselines(count);  // leaves GPU 1 current
    for (int r = 0; r < rounds; ++r) {
        {
            const tutorial::During during(peer_copy);
            CUDA_CHECK(cudaMemcpyPeerAsync(b.on_1, 1, b.on_0, 0, bytes, nullptr));
        }
        found.wrong += mismatches_on_device(b.on_1, count, seed);
        {
            const tutorial::During during(pinned_upload);
            CUDA_CHECK(cudaMemcpyAsync(b.on_1, b.host, bytes, cudaMemcpyHostToDevice, nullptr));
        }
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    free_baselines(b);
    return found;
}

// Step 1. The managed data to GPU `to`, on that GPU's legacy stream, as the step `step`.
void prefetch_to_gpu(std::uint32_t* data, std::size_t bytes, int to, const tutorial::Step& step) {
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, to};
    CUDA_CHECK(cudaSetDevice(to));
    {
        const tutorial::During during(step);
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, nullptr));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
}

// Step 2. Where the range was last asked to go: the destination's device ordinal.
int last_prefetch_location(const void* data, std::size_t bytes) {
    int location = -3;
    CUDA_CHECK(cudaMemRangeGetAttribute(&location, sizeof location,
                                        cudaMemRangeAttributeLastPrefetchLocation, data, bytes));
    return location;
}

// Step 3. The baselines' memory, and peer access from GPU 0 to GPU 1.
Baselines allocate_baselines(std::size_t count) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    Baselines b;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMalloc(&b.on_0, bytes));
    fill_on_device(b.on_0, count, seed);
    CUDA_CHECK(cudaDeviceEnablePeerAccess(1, 0));
    CUDA_CHECK(cudaSetDevice(1));
    CUDA_CHECK(cudaMalloc(&b.on_1, bytes));
    CUDA_CHECK(cudaMallocHost(&b.host, bytes));
    return b;
}

void free_baselines(const Baselines& b) {
    CUDA_CHECK(cudaFreeHost(b.host));
    CUDA_CHECK(cudaFree(b.on_1));
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaDeviceDisablePeerAccess(1));
    CUDA_CHECK(cudaFree(b.on_0));
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    int gpus = 0;
    CUDA_CHECK(cudaGetDeviceCount(&gpus));
    if (gpus < 2) {
        std::printf("SKIP: prefetch_between_gpus: needs 2 GPUs; this machine has %d\n", gpus);
        return 77;  // as the course says a missing GPU
    }
    const std::size_t bytes = std::size_t{512} << 20;
    walkthrough(std::size_t{1} << 20, 1);  // a warm-up: the first launches load the kernels
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(bytes, 7);
    times.print();
    std::printf("LastPrefetchLocation named %d of %d destinations; %zu values wrong\n", found.named,
                found.prefetches, found.wrong);
    // The card's number: the prefetch GPU 0 -> GPU 1 beside the upload and the peer copy, as
    // rates: GB = 1e9 bytes over the move's GPU time.
    const auto gbps = [&](const tutorial::Step& step) {
        return static_cast<double>(bytes) / 1e9 / (times.median_ms(step) / 1e3);
    };
    std::printf(
        "512 MiB: %.1f GB/s from GPU 0 to GPU 1 (%.1f back): %.2fx a pinned upload's "
        "%.1f, yet %.0f%% of a peer copy's %.1f\n",
        gbps(to_gpu1), gbps(to_gpu0), gbps(to_gpu1) / gbps(pinned_upload), gbps(pinned_upload),
        100.0 * gbps(to_gpu1) / gbps(peer_copy), gbps(peer_copy));
    return found.wrong == 0 ? 0 : 1;
}
#endif
