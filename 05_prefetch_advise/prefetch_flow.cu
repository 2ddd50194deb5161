// Section prefetch_flow: foo(stream) from the Programming Guide's Unified Memory appendix (N.3.1)
// as written there: allocate, initialise on the CPU, prefetch to the GPU, a kernel, prefetch back,
// synchronize, use on the CPU, free; then foo without its prefetches (faults both ways). Alone:
//   nvcc -std=c++17 -I. 05_prefetch_advise/prefetch_flow.cu common/standalone.cu
//       -o build/prefetch_flow  (on the same line)
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. prefetch_flow.cu ../common/standalone.cu
//       -o ../build/prefetch_flow)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace {

__global__ void mykernel(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = data[i] * 2 + 1;
    }
}

// The appendix leaves init_data and use_data to the reader: here the CPU writes every value,
// and then adds up every value.
void init_data(std::uint32_t* data, std::size_t count) {
    fill_on_host(data, count, 9);
}

std::uint64_t use_data(const std::uint32_t* data, std::size_t count) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < count; ++i) sum += data[i];
    return sum;
}

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step with_prefetches{"foo: prefetch, kernel, prefetch back, use"};
constexpr tutorial::Step without_prefetches{"foo without the prefetches"};
constexpr tutorial::Step use_alone{"the CPU's use alone, its pages never moved"};

// What the walkthrough found: sums the CPU used that were not the values it should find (0 to 3).
struct Found {
    std::size_t wrong = 0;      // of the three sums
    std::size_t foo_wrong = 0;  // of foo's own (0 or 1)
};

// Defined below the walkthrough:
std::uint64_t foo(cudaStream_t s, int device, std::size_t count);
std::uint64_t foo_without_prefetches(cudaStream_t s, std::size_t count);
std::uint64_t use_on_host_alone(std::size_t count);

Found walkthrough(std::size_t count, int device) {
    // What use_data must find once the kernel ran: the sum of 2 * initial + 1 (mod 2^32).
    std::uint64_t expected = 0, initial = 0;
    for (std::size_t i = 0; i < count; ++i) {
        expected += pattern(i, 9) * 2u + 1u;
        initial += pattern(i, 9);
    }
    cudaStream_t s = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    Found found;
    found.foo_wrong = foo(s, device, count) != expected;
    found.wrong += found.foo_wrong;
    found.wrong += foo_without_prefetches(s, count) != expected;
    found.wrong += use_on_host_alone(count) != initial;
    CUDA_CHECK(cudaStreamDestroy(s));
    return found;
}

// foo(stream) as the appendix writes it, with CUDA 13's cudaMemLocation for the two places.
// Returns what use_data added up.
std::uint64_t foo(cudaStream_t s, int device, std::size_t count) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    init_data(data, count);  // execute on the CPU
    std::uint64_t used = 0;
    {
        const tutorial::During during(with_prefetches, s);
        const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, s));  // prefetch to the GPU
        mykernel<<<1024, 256, 0, s>>>(data, count);                // execute on the GPU
        CUDA_CHECK_LAUNCH();
        const cudaMemLocation cpu{cudaMemLocationTypeHost, 0};
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, cpu, 0, s));  // prefetch to the CPU
        CUDA_CHECK(cudaStreamSynchronize(s));
        used = use_data(data, count);  // execute on the CPU
    }
    CUDA_CHECK(cudaFree(data));
    return used;
}

// The same without the prefetches: the kernel's first touch faults every page over to the GPU,
// and the CPU's reads fault them back.
std::uint64_t foo_without_prefetches(cudaStream_t s, std::size_t count) {
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, count * sizeof(std::uint32_t)));
    init_data(data, count);
    std::uint64_t used = 0;
    {
        const tutorial::During during(without_prefetches, s);
        mykernel<<<1024, 256, 0, s>>>(data, count);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaStreamSynchronize(s));
        used = use_data(data, count);
    }
    CUDA_CHECK(cudaFree(data));
    return used;
}

// The CPU's part alone: the same use_data on data written on the CPU, whose pages never left the
// host. Both ways of foo pay this much for the sum itself; what either takes above it is the
// moving of the data, by prefetches or by page faults.
std::uint64_t use_on_host_alone(std::size_t count) {
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, count * sizeof(std::uint32_t)));
    init_data(data, count);
    std::uint64_t used = 0;
    {
        const tutorial::During during(use_alone);
        used = use_data(data, count);
    }
    CUDA_CHECK(cudaFree(data));
    return used;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::size_t count = std::size_t{64} << 20;  // 256 MiB
    walkthrough(std::size_t{2} << 20, 0);  // a warm-up: the first launch loads the kernel
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    std::size_t wrong = 0;
    for (int round = 0; round < 5; ++round) {  // five rounds: the answer is their medians
        wrong += walkthrough(count, 0).wrong;
    }
    times.print();
    std::printf("foo(stream) with and without its prefetches, and the CPU's use alone, 5 times: "
                "%zu of 15 sums wrong\n",
                wrong);
    // The card's number: what moving the data took each way, its time above the CPU's use alone
    // (at least a tenth of that, so that the ratio stays finite).
    const double use_ms = times.median_host_ms(use_alone);
    const double with_ms = times.median_host_ms(with_prefetches);
    const double without_ms = times.median_host_ms(without_prefetches);
    const double moving_with = std::max(with_ms - use_ms, 0.1 * use_ms);
    const double moving_without = std::max(without_ms - use_ms, 0.1 * use_ms);
    std::printf("256 MiB: %.2fx less to move the data with the prefetches: above the CPU's use "
                "alone (%.1f ms) they took %.1f ms, page faults both ways %.1f ms (the whole foo "
                "%.1f against %.1f ms); where the attribute says a queued prefetch goes: "
                "./build/bin/05_prefetch_advise prefetch_flow\n",
                moving_without / moving_with, use_ms, moving_with, moving_without, with_ms,
                without_ms);
    return wrong == 0 ? 0 : 1;
}
#endif
