// The course's check of exercise ex06_free_after_read (the task is in ../free_after_read.cu):
// the race of the `wrong_stream_free` section, with the learner's hand_back() in place of the
// free. Every value the reader copied out must be the owner's, and the block must go back to the
// pool.
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>

// Written by the learner (exercises/free_after_read.cu).
void hand_back(void* block, cudaStream_t owner, cudaStream_t reader, cudaEvent_t read);

namespace {

using tutorial::Context;
using tutorial::format;
using tutorial::format_bytes;
using tutorial::MiB;
using tutorial::Result;

constexpr std::uint32_t owner_seed = 61;  // what the owner writes into its block
constexpr std::uint32_t next_seed = 62;   // what the owner's next allocation gets written
constexpr double reader_delay_ms = 50.0;  // the reader's stream is busy this long first
constexpr int races = 3;

// A pool of device memory that keeps everything freed into it (release threshold UINT64_MAX):
// a block read after its free is still this program's memory, mapped until the pool goes.
cudaMemPool_t make_pool(int device) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    std::uint64_t keep_all = UINT64_MAX;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
    return pool;
}

// What one race found.
struct Race {
    std::size_t wrong = 0;    // values the reader copied out that were not the owner's
    bool same_block = false;  // the owner's next allocation was the block handed back
    double hand_back_ms = 0;  // host time of the learner's hand_back()
};

// The owner's stream allocates a block and fills it; the reader's stream waits for that, is busy
// for 50 ms and then copies the block out. The learner's hand_back() gives the block back; the
// owner allocates the same size again at once and fills the new block with other values.
Race race(cudaMemPool_t pool, std::size_t bytes) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    cudaStream_t owner = nullptr, reader = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&owner, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
    cudaEvent_t filled = nullptr, read = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&read, cudaEventDisableTiming));
    std::uint32_t* seen = nullptr;  // where the reader copies the block to
    CUDA_CHECK(cudaMalloc(&seen, bytes));
    std::uint32_t* block = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&block), bytes, pool, owner));
    fill_on_device_async(block, count, owner_seed, owner);
    CUDA_CHECK(cudaEventRecord(filled, owner));
    CUDA_CHECK(cudaStreamWaitEvent(reader, filled, 0));
    tutorial::launch_busy(reader, reader_delay_ms);
    CUDA_CHECK(cudaMemcpyAsync(seen, block, bytes, cudaMemcpyDeviceToDevice, reader));

    Race r;
    const tutorial::HostTimer timer;
    hand_back(block, owner, reader, read);
    r.hand_back_ms = timer.elapsed_ms();
    std::uint32_t* next = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&next), bytes, pool, owner));
    fill_on_device_async(next, count, next_seed, owner);

    CUDA_CHECK(cudaStreamSynchronize(owner));
    CUDA_CHECK(cudaStreamSynchronize(reader));
    r.wrong = mismatches_on_device(seen, count, owner_seed);
    r.same_block = next == block;
    CUDA_CHECK(cudaFreeAsync(next, owner));
    CUDA_CHECK(cudaStreamSynchronize(owner));
    CUDA_CHECK(cudaFree(seen));
    CUDA_CHECK(cudaEventDestroy(filled));
    CUDA_CHECK(cudaEventDestroy(read));
    CUDA_CHECK(cudaStreamDestroy(owner));
    CUDA_CHECK(cudaStreamDestroy(reader));
    return r;
}

Result check(Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported) != 1) {
        return ctx.skip("memoryPoolsSupported = 0: no stream-ordered pools on this device");
    }
    // Three blocks at most at once (the block, the owner's next, the reader's copy).
    const std::size_t bytes =
        tutorial::fit_in_free_memory((ctx.quick() ? 16 : 64) * MiB, 0.25 / 3, 2 * MiB);
    const std::size_t count = bytes / sizeof(std::uint32_t);
    cudaMemPool_t pool = make_pool(ctx.device);
    std::size_t wrong = 0;
    int same = 0;
    double slowest_ms = 0;
    for (int i = 0; i < races; ++i) {
        const Race r = race(pool, bytes);
        wrong += r.wrong;
        same += r.same_block ? 1 : 0;
        slowest_ms = std::max(slowest_ms, r.hand_back_ms);
    }
    std::uint64_t in_use = 0;  // every block this check freed is back: what is left is a leak
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &in_use));
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    std::printf(
        "%d races on %s blocks (the reader's stream busy %.0f ms before its copy):\n"
        "  the reader copied out %zu of %zu values wrong\n"
        "  the owner's next allocation was the block handed back in %d of %d races\n"
        "  hand_back took %.3f ms at most%s\n"
        "  in use in the pool at the end: %s\n\n",
        races, format_bytes(bytes).c_str(), reader_delay_ms, wrong, races * count, same, races,
        slowest_ms,
        slowest_ms >= reader_delay_ms / 2
            ? " (it waited for the reader: stream order needs no wait on the host)"
            : "",
        format_bytes(in_use).c_str());

    const bool right = wrong == 0;
    ctx.claim(tutorial::documented(
        "reader_values_right",
        "every value the reader copied out is one the owner wrote before hand_back", right,
        format("%zu of %zu values wrong", wrong, races * count),
        "the free ran before the reader's copy, and the owner's next allocation wrote over the "
        "block. First step: in hand_back, cudaEventRecord(read, reader), then "
        "cudaStreamWaitEvent(owner, read, 0) before cudaFreeAsync(block, owner) (or "
        "cudaFreeAsync(block, reader) alone)",
        tutorial::Entry{"Runtime API reference: cudaFreeAsync", "Inserts a free operation",
                        "Inserts"}));
    const bool given_back = in_use == 0;
    ctx.claim(tutorial::documented(
        "block_given_back",
        "the block went back to the pool (in use once both streams are done and the owner's "
        "next block is freed)",
        given_back, format_bytes(in_use),
        "hand_back does not free the block. First step: keep cudaFreeAsync(block, ...) in "
        "hand_back, ordered after the reader's copy",
        tutorial::Entry{"Runtime API reference: cudaMemPoolGetAttribute",
                        "cudaMemPoolAttrUsedMemCurrent", "is"}));
    return ctx.verdict(right && given_back,
                       format("the reader copied out %zu of %zu values wrong in %d races; %s of "
                              "the pool in use at the end",
                              wrong, races * count, races, format_bytes(in_use).c_str()));
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex06_free_after_read",
        "Exercise (chapter 06_vmm): free a block only after the other stream has read it",
        {{"check",
          "hand_back: the reader copies out every value right, and the block goes back",
          {},
          true,
          check}},
        {},
        "06_vmm/exercises/free_after_read.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
