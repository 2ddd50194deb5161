// Section discard: does dead data still have to move? A prefetch copies every page; a discard
// (CUDA 13.0) first says the contents are no longer needed, so the pages may move without their
// data. Each way to the GPU and back, then a discard of every other chunk. Alone:
//   nvcc -std=c++17 -I. 05_prefetch_advise/discard.cu common/standalone.cu -o build/discard
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. discard.cu ../common/standalone.cu
//       -o ../build/discard)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr std::size_t chunk = 2 << 20;  // the partial discard takes every other 2 MiB chunk

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched. The
// moves to the GPU ([0]) and back to the CPU ([1]), four ways each:
constexpr tutorial::Step moves[2][4] = {
    {{"to the GPU: a prefetch of live data"},
     {"to the GPU: a discard, then the prefetch"},
     {"to the GPU: discard and prefetch in one call"},
     {"to the GPU: a prefetch of a new allocation"}},
    {{"to the CPU: a prefetch of live data"},
     {"to the CPU: a discard, then the prefetch"},
     {"to the CPU: discard and prefetch in one call"},
     {"to the CPU: a prefetch of a new allocation"}},
};

// What a partial discard left: values in the chunks not discarded that are not as the kernel
// wrote them (none may be), and values in the discarded chunks that still are.
struct Partial {
    std::size_t kept = 0, kept_wrong = 0;
    std::size_t discarded = 0, discarded_as_written = 0;
};

// Defined below the walkthrough:
void move_four_ways(std::uint32_t* data, std::size_t bytes, bool to_gpu, int device,
                    cudaStream_t s);
void discard_then_prefetch(void* data, std::size_t bytes, cudaMemLocation to, cudaStream_t stream);
void discard_and_prefetch(void* data, std::size_t bytes, cudaMemLocation to, cudaStream_t stream);
void write_on_other_side(std::uint32_t* data, std::size_t bytes, bool to_gpu, cudaStream_t s);
Partial discard_every_other_chunk(std::uint32_t* data, std::size_t bytes, cudaStream_t stream);

// `bytes`: a multiple of 4 MiB, two chunks.
Partial walkthrough(std::size_t bytes, int device) {
    cudaStream_t stream = nullptr;  // the batch calls refuse the legacy stream
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    // 1. To the GPU, each way after the CPU wrote the buffer.
    move_four_ways(data, bytes, true, device, stream);
    // 2. Back to the CPU, each way after a kernel wrote it.
    move_four_ways(data, bytes, false, device, stream);
    // 3. Every other chunk discarded: the rest keep their data.
    const Partial p = discard_every_other_chunk(data, bytes, stream);
    CUDA_CHECK(cudaFree(data));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return p;
}

// The buffer to the GPU (or back to the CPU) four ways: a plain prefetch of live data, a discard
// and then the prefetch, both in one call, and, for comparison, a prefetch of a new allocation
// that was never written (pages to place, no data to copy).
void move_four_ways(std::uint32_t* data, std::size_t bytes, bool to_gpu, int device,
                    cudaStream_t s) {
    const cudaMemLocation to = to_gpu ? cudaMemLocation{cudaMemLocationTypeDevice, device}
                                      : cudaMemLocation{cudaMemLocationTypeHost, 0};
    const tutorial::Step* way = moves[to_gpu ? 0 : 1];  // this direction's four steps
    write_on_other_side(data, bytes, to_gpu, s);
    {
        const tutorial::During during(way[0], s);
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, to, 0, s));
    }
    write_on_other_side(data, bytes, to_gpu, s);
    {
        const tutorial::During during(way[1], s);
        discard_then_prefetch(data, bytes, to, s);
    }
    write_on_other_side(data, bytes, to_gpu, s);
    {
        const tutorial::During during(way[2], s);
        discard_and_prefetch(data, bytes, to, s);
    }
    void* fresh = nullptr;
    CUDA_CHECK(cudaMallocManaged(&fresh, bytes));
    {
        const tutorial::During during(way[3], s);
        CUDA_CHECK(cudaMemPrefetchAsync(fresh, bytes, to, 0, s));
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaFree(fresh));
}

// Moving pages whose contents nobody will read again: a discard, then the prefetch. Read a
// discarded range only after writing it again.
void discard_then_prefetch(void* data, std::size_t bytes, cudaMemLocation to, cudaStream_t stream) {
    void* ranges[] = {data};
    std::size_t sizes[] = {bytes};
    CUDA_CHECK(cudaMemDiscardBatchAsync(ranges, sizes, 1, 0, stream));
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, to, 0, stream));
}

// The same in one call (CUDA 13).
void discard_and_prefetch(void* data, std::size_t bytes, cudaMemLocation to, cudaStream_t stream) {
    void* ranges[] = {data};
    std::size_t sizes[] = {bytes};
    std::size_t location_from_range[] = {0};  // the one location applies from range 0 on
    CUDA_CHECK(cudaMemDiscardAndPrefetchBatchAsync(ranges, sizes, 1, &to, location_from_range, 1, 0,
                                                   stream));
}

// Before each move the other side writes the whole buffer, so that its pages start there.
void write_on_other_side(std::uint32_t* data, std::size_t bytes, bool to_gpu, cudaStream_t s) {
    CUDA_CHECK(cudaStreamSynchronize(s));
    if (to_gpu) {
        fill_on_host(data, bytes / 4, 1);
    } else {
        fill_on_device_async(data, bytes / 4, 2, s);
    }
}

// A kernel writes the whole buffer, every other 2 MiB chunk is discarded in one batch, and the
// whole buffer is prefetched to the CPU, which compares. The chunks not given to the discard keep
// their data; what the discarded ones hold after the prefetch, the cudaMemDiscardBatchAsync entry
// does not say (without the prefetch or a write, a read would be indeterminate).
Partial discard_every_other_chunk(std::uint32_t* data, std::size_t bytes, cudaStream_t stream) {
    std::vector<void*> ranges;
    std::vector<std::size_t> sizes;
    for (std::size_t at = chunk; at < bytes; at += 2 * chunk) {
        ranges.push_back(reinterpret_cast<char*>(data) + at);
        sizes.push_back(chunk);
    }
    fill_on_device_async(data, bytes / 4, 45, stream);
    CUDA_CHECK(cudaMemDiscardBatchAsync(ranges.data(), sizes.data(), ranges.size(), 0, stream));
    const cudaMemLocation host{cudaMemLocationTypeHost, 0};
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, host, 0, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    Partial p;
    for (std::size_t i = 0; i < bytes / 4; ++i) {
        const bool as_written = data[i] == pattern(i, 45);
        if ((i * 4 / chunk) % 2 == 1) {
            ++p.discarded;
            p.discarded_as_written += as_written;
        } else {
            ++p.kept;
            p.kept_wrong += !as_written;
        }
    }
    return p;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    walkthrough(std::size_t{8} << 20, 0);  // a warm-up: the first launches load the kernels
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    Partial p;
    std::size_t kept_wrong = 0;
    for (int round = 0; round < 5; ++round) {  // five rounds: the answer is their medians
        p = walkthrough(std::size_t{1} << 30, 0);
        kept_wrong += p.kept_wrong;
    }
    times.print();
    std::printf("kept chunks, 5 rounds: %zu of %zu values not as the kernel wrote them\n",
                kept_wrong, 5 * p.kept);
    std::printf("discarded chunks, the last round: %zu of %zu values still as the kernel wrote "
                "them\n",
                p.discarded_as_written, p.discarded);
    // The card's number: to the GPU, the prefetch of live data against the discard and prefetch
    // in one call.
    const double live_ms = times.median_ms(moves[0][0]);
    const double one_call_ms = times.median_ms(moves[0][2]);
    std::printf("1 GiB: %.3gx: %.2f ms to prefetch live data to the GPU, %.2f ms to discard it "
                "and prefetch in one call (%.2f ms in two); what moved, the driver's count: "
                "./build/bin/05_prefetch_advise discard\n",
                live_ms / one_call_ms, live_ms, one_call_ms, times.median_ms(moves[0][1]));
    return kept_wrong == 0 ? 0 : 1;
}
#endif
