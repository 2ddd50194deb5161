// Section prefetch_batch: many separate managed ranges to one GPU. Which costs less: a prefetch
// call per range, one cudaMemPrefetchBatchAsync (CUDA 13.0), or one prefetch of the whole span,
// gaps included? Then one batch that sends ranges to two places. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 05_prefetch_advise/prefetch_batch.cu common/standalone.cu
//       -o build/prefetch_batch  (on the same line)
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. prefetch_batch.cu ../common/standalone.cu
//       -o ../build/prefetch_batch)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr std::size_t range_bytes = 64 << 10;  // each range; ranges lie 128 KiB apart
constexpr std::size_t stride = 2 * range_bytes;

struct Ranges {
    std::vector<void*> pointers;
    std::vector<std::size_t> sizes;
};

// The ranges go to one GPU three ways: a prefetch call per range, one batch call for all of them
// (CUDA 13), or one call over the whole span, gaps included.
enum Way { loop, batch, span, ways };

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched. Each
// way ([loop], [batch], [span]) until its stream is done, a kernel's read of every range after
// it, and the same prefetch again with every range in place ([loop], [batch] only); then one
// batch to two places.
constexpr tutorial::Step prefetching[ways] = {
    {"a prefetch per range (cudaMemPrefetchAsync)"},
    {"one batch for all ranges (cudaMemPrefetchBatchAsync)"},
    {"one prefetch of the span, gaps and all"}};
constexpr tutorial::Step reading[ways] = {{"per range: then a kernel reads every range"},
                                          {"batch: then a kernel reads every range"},
                                          {"span: then a kernel reads every range"}};
constexpr tutorial::Step again_in_place[ways] = {
    {"per range, again: every range in place already"},
    {"batch, again: every range in place already"},
    {}};
constexpr tutorial::Step split_batch{"one batch: half to the GPU, half to the CPU"};
constexpr tutorial::Step cpu_half_read{"the CPU half: a kernel reads it"};

// What the walkthrough found: each range's recorded location after each way ([way][range]) and
// after the split batch; values a kernel found changed at the end.
struct Found {
    std::vector<int> at[ways];
    std::vector<int> split;
    std::size_t wrong = 0;
};

// Defined below the walkthrough:
Ranges make_ranges(char* base, std::size_t count);
void prefetch(Way way, Ranges& r, int device, cudaStream_t stream);
void prefetch_halves(Ranges& r, int device, cudaStream_t stream);
std::vector<int> last_locations(const Ranges& r);
__global__ void read_ranges(const std::uint32_t* base, std::size_t first, std::size_t n,
                            unsigned long long* sum);

Found walkthrough(std::size_t count, int device) {
    const std::size_t bytes = count * stride;
    char* base = nullptr;
    CUDA_CHECK(cudaMallocManaged(&base, bytes));
    Ranges r = make_ranges(base, count);
    auto* values = reinterpret_cast<std::uint32_t*>(base);
    fill_on_host(values, bytes / 4, 47);
    cudaStream_t stream = nullptr;  // the batch call refuses the legacy stream
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    const cudaMemLocation host{cudaMemLocationTypeHost, 0};
    Found found;
    for (int w = 0; w < ways; ++w) {
        // Each way starts from the whole allocation on the CPU.
        CUDA_CHECK(cudaMemPrefetchAsync(base, bytes, host, 0, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        {
            const tutorial::During during(prefetching[w], stream);
            prefetch(Way(w), r, device, stream);
            CUDA_CHECK(cudaStreamSynchronize(stream));
        }
        {
            const tutorial::During during(reading[w]);  // finds every range on the GPU
            read_ranges<<<1024, 256>>>(values, 0, count, sum);
            CUDA_CHECK_LAUNCH();
        }
        found.at[w] = last_locations(r);
        if (w != span) {  // the same prefetch again: nothing is left to move
            const tutorial::During during(again_in_place[w], stream);
            prefetch(Way(w), r, device, stream);
            CUDA_CHECK(cudaStreamSynchronize(stream));
        }
    }
    // One batch, two places, from the whole allocation on the GPU; a kernel then reads the half
    // sent to the CPU, and faults it back.
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    CUDA_CHECK(cudaMemPrefetchAsync(base, bytes, gpu, 0, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    {
        const tutorial::During during(split_batch, stream);
        prefetch_halves(r, device, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    {
        const tutorial::During during(cpu_half_read);
        read_ranges<<<1024, 256>>>(values, count / 2, count - count / 2, sum);
        CUDA_CHECK_LAUNCH();
    }
    found.split = last_locations(r);
    found.wrong = mismatches_on_device(values, bytes / 4, 47);
    CUDA_CHECK(cudaFree(sum));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(base));
    return found;
}

// Step 1. `count` ranges of range_bytes, one every `stride` bytes of one allocation.
Ranges make_ranges(char* base, std::size_t count) {
    Ranges r;
    for (std::size_t i = 0; i < count; ++i) {
        r.pointers.push_back(base + i * stride);
        r.sizes.push_back(range_bytes);
    }
    return r;
}

// Step 2. The ranges to one GPU, one way.
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

// A kernel reads ranges [first, first + n) and nothing else: a range still on the CPU costs
// page faults that a range already on the GPU does not.
__global__ void read_ranges(const std::uint32_t* base, std::size_t first, std::size_t n,
                            unsigned long long* sum) {
    constexpr std::size_t words = range_bytes / 4, words_apart = stride / 4;
    unsigned long long local = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n * words;
         i += std::size_t(gridDim.x) * blockDim.x) {
        local += base[(first + i / words) * words_apart + i % words];
    }
    atomicAdd(sum, local);
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::size_t count = 4096;
    walkthrough(64, 0);  // a warm-up: the first launches load the kernel
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    Found found;
    std::size_t wrong = 0;
    for (int round = 0; round < 7; ++round) {  // seven rounds: the answer is their medians
        found = walkthrough(count, 0);
        wrong += found.wrong;
    }
    times.print();
    for (int w = 0; w < ways; ++w) {
        std::size_t on_gpu = 0;
        for (int at : found.at[w]) on_gpu += at == 0;
        std::printf("%-54s %zu of %zu ranges record GPU 0\n", prefetching[w].name, on_gpu, count);
    }
    std::printf("%zu values changed in the 7 rounds\n", wrong);
    // The card's number: each way from its first call until its stream was done.
    const double batch_ms = times.median_host_ms(prefetching[batch]);
    const double span_ms = times.median_host_ms(prefetching[span]);
    std::printf("4096 ranges of 64 KiB, each way until its stream was done: one "
                "cudaMemPrefetchBatchAsync %.2f ms, the loop %.2f ms, one prefetch of the span "
                "%.2f ms (batch / span: %.3gx)\n",
                batch_ms, times.median_host_ms(prefetching[loop]), span_ms, batch_ms / span_ms);
    return wrong == 0 ? 0 : 1;
}
#endif
