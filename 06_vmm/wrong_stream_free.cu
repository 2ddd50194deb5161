// Section wrong_stream_free: a block freed with cudaFreeAsync in one stream while another stream
// still reads it. What does the reader get once the first stream allocates again? And which of a
// pool's three reuse rules let another stream have a freed block?
// Built alone, from the course's folder (mkdir -p build first), then ./build/wrong_stream_free:
//   nvcc -std=c++17 -I. 06_vmm/wrong_stream_free.cu common/standalone.cu -o build/wrong_stream_free
//   (or in 06_vmm/: nvcc -std=c++17 -I.. wrong_stream_free.cu ../common/standalone.cu
//       -o ../build/wrong_stream_free)  (on the same line)
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <cstdio>

namespace {

constexpr std::uint32_t owner_seed = 61;  // what the owner writes into its block
constexpr std::uint32_t next_seed = 62;   // what the owner's next allocation gets written
constexpr double reader_delay_ms = 50.0;  // the reader's stream is busy this long first

// The three ways the owner can give its block back while stream `reader` still reads it.
enum class Free {
    in_owner,         // the bug: cudaFreeAsync in the owner's stream, no dependency on the reader
    after_event,      // the fix: the owner waits for an event the reader records, then frees
    in_reader_stream  // the other fix: the free is queued in the reader's stream, after the read
};

// What one run of the race found.
struct Race {
    void* block = nullptr;  // the owner's block, read by the other stream
    void* next = nullptr;   // the owner's next allocation, of the same size, from the same pool
    std::size_t wrong = 0;  // values the reader copied out that were not the owner's
};

cudaMemPool_t make_pool(int device);
Race race(cudaMemPool_t pool, std::size_t bytes, Free how);

// One case of the reuse rules: where the free happened and what the allocating stream knew of it.
enum class Case {
    completed,    // the free has run, its stream synchronized with the CPU; no stream dependency
    after_event,  // the free is still queued, and the allocating stream waits for an event after it
    no_dependency  // the free is still queued, and the allocating stream knows nothing of it
};
constexpr int case_count = 3;
constexpr int setting_count = 5;  // all three rules on, each one off in turn, all three off

// Whether another stream's next allocation got the freed block, for each setting and case.
struct Rules {
    int defaults[3] = {};  // the three attributes as a new pool has them
    bool reused[setting_count][case_count] = {};
};

Rules reuse_rules(int device, std::size_t bytes);

// What the walkthrough found.
struct Found {
    Race bug, after_event, in_reader_stream;
    Rules rules;
};

Found walkthrough(std::size_t bytes, int device) {
    Found found;
    // 1. A pool of the course's own, which keeps what it is given back: the race below touches
    //    only memory this program owns, and every freed block stays mapped until the end.
    cudaMemPool_t pool = make_pool(device);

    // 2. The bug: the owner frees its block in its own stream while the reader's stream (busy
    //    first) has yet to copy it out; then the owner allocates again and writes.
    found.bug = race(pool, bytes, Free::in_owner);

    // 3. The fix: the reader records an event after its copy, and the owner waits for it
    //    (cudaStreamWaitEvent) before the free.
    found.after_event = race(pool, bytes, Free::after_event);

    // 4. The other fix: the free is queued in the stream that reads, after the read.
    found.in_reader_stream = race(pool, bytes, Free::in_reader_stream);
    CUDA_CHECK(cudaMemPoolDestroy(pool));

    // 5. The three reuse attributes, each turned off in turn (then all three): does another
    //    stream's next allocation get a freed block, in each of three cases?
    found.rules = reuse_rules(device, bytes);
    return found;
}

// A pool of device memory that keeps everything freed into it (release threshold UINT64_MAX).
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

// The owner's stream allocates a block and fills it; the reader's stream waits for that, is busy
// for 50 ms (any earlier work of its own) and then copies the block out. Meanwhile the owner
// gives the block back as `how` says, allocates the same size again and fills the new block.
Race race(cudaMemPool_t pool, std::size_t bytes, Free how) {
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
    CUDA_CHECK(cudaEventRecord(read, reader));

    if (how == Free::in_owner) {
        CUDA_CHECK(cudaFreeAsync(block, owner));  // nothing orders it after the reader's copy
    } else if (how == Free::after_event) {
        CUDA_CHECK(cudaStreamWaitEvent(owner, read, 0));
        CUDA_CHECK(cudaFreeAsync(block, owner));
    } else {
        CUDA_CHECK(cudaFreeAsync(block, reader));
    }
    std::uint32_t* next = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&next), bytes, pool, owner));
    fill_on_device_async(next, count, next_seed, owner);

    CUDA_CHECK(cudaStreamSynchronize(owner));
    CUDA_CHECK(cudaStreamSynchronize(reader));
    const Race r{block, next, mismatches_on_device(seen, count, owner_seed)};
    CUDA_CHECK(cudaFreeAsync(next, owner));
    CUDA_CHECK(cudaStreamSynchronize(owner));
    CUDA_CHECK(cudaFree(seen));
    CUDA_CHECK(cudaEventDestroy(filled));
    CUDA_CHECK(cudaEventDestroy(read));
    CUDA_CHECK(cudaStreamDestroy(owner));
    CUDA_CHECK(cudaStreamDestroy(reader));
    return r;
}

// One case on a fresh pool with the three rules set as given: stream `freer` allocates a block
// and frees it; stream `taker` then allocates the same size. Reused: `taker` got the same block.
bool taker_reuses(int device, std::size_t bytes, const int rules[3], Case c) {
    cudaMemPool_t pool = make_pool(device);
    int follow = rules[0], opportunistic = rules[1], internal = rules[2];
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseFollowEventDependencies, &follow));
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &opportunistic));
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &internal));
    cudaStream_t freer = nullptr, taker = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&freer, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&taker, cudaStreamNonBlocking));
    cudaEvent_t freed = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&freed, cudaEventDisableTiming));

    void* block = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&block, bytes, pool, freer));
    if (c != Case::completed) tutorial::launch_busy(freer, 20.0);  // keeps the free queued
    CUDA_CHECK(cudaFreeAsync(block, freer));
    if (c == Case::completed) CUDA_CHECK(cudaStreamSynchronize(freer));
    if (c == Case::after_event) {
        CUDA_CHECK(cudaEventRecord(freed, freer));
        CUDA_CHECK(cudaStreamWaitEvent(taker, freed, 0));
    }
    void* taken = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&taken, bytes, pool, taker));
    CUDA_CHECK(cudaStreamSynchronize(taker));
    CUDA_CHECK(cudaStreamSynchronize(freer));
    CUDA_CHECK(cudaFreeAsync(taken, taker));
    CUDA_CHECK(cudaStreamSynchronize(taker));
    CUDA_CHECK(cudaEventDestroy(freed));
    CUDA_CHECK(cudaStreamDestroy(freer));
    CUDA_CHECK(cudaStreamDestroy(taker));
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    return taken == block;
}

Rules reuse_rules(int device, std::size_t bytes) {
    Rules found;
    cudaMemPool_t fresh = make_pool(device);
    CUDA_CHECK(cudaMemPoolGetAttribute(fresh, cudaMemPoolReuseFollowEventDependencies,
                                       &found.defaults[0]));
    CUDA_CHECK(
        cudaMemPoolGetAttribute(fresh, cudaMemPoolReuseAllowOpportunistic, &found.defaults[1]));
    CUDA_CHECK(cudaMemPoolGetAttribute(fresh, cudaMemPoolReuseAllowInternalDependencies,
                                       &found.defaults[2]));
    CUDA_CHECK(cudaMemPoolDestroy(fresh));
    // FollowEventDependencies, AllowOpportunistic, AllowInternalDependencies (1: allowed).
    const int settings[setting_count][3] = {{1, 1, 1}, {0, 1, 1}, {1, 0, 1}, {1, 1, 0}, {0, 0, 0}};
    for (int s = 0; s < setting_count; ++s) {
        for (int c = 0; c < case_count; ++c) {
            found.reused[s][c] = taker_reuses(device, bytes, settings[s], static_cast<Case>(c));
        }
    }
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::size_t bytes = std::size_t{64} << 20;
    const Found found = walkthrough(bytes, 0);
    const std::size_t count = bytes / sizeof(std::uint32_t);
    // The card's number: how many of the block's values the reader got wrong, each way.
    std::printf("64 MiB block, %zu values. The reader copied out:\n", count);
    std::printf("  freed in the owner's stream:   %zu wrong (block %p, the owner's next %p)\n",
                found.bug.wrong, found.bug.block, found.bug.next);
    std::printf("  freed after the reader's event: %zu wrong\n", found.after_event.wrong);
    std::printf("  freed in the reader's stream:  %zu wrong\n", found.in_reader_stream.wrong);
    const char* settings[setting_count] = {"all three on", "FollowEventDependencies off",
                                           "AllowOpportunistic off",
                                           "AllowInternalDependencies off", "all three off"};
    std::printf(
        "Another stream's next allocation got the freed block (completed, CPU synced / "
        "pending free, event / pending free, no dependency):\n");
    for (int s = 0; s < setting_count; ++s) {
        std::printf("  %-30s %s / %s / %s\n", settings[s], found.rules.reused[s][0] ? "yes" : "no",
                    found.rules.reused[s][1] ? "yes" : "no",
                    found.rules.reused[s][2] ? "yes" : "no");
    }
    const bool fixed = found.after_event.wrong == 0 && found.in_reader_stream.wrong == 0;
    return fixed ? 0 : 1;
}
#endif
