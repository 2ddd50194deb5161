// Section pool_cost: what does a pool's release threshold cost? A loop allocates from a pool, lets
// a kernel use the block, frees it and synchronizes, on three pools, with the threshold at 0 and at
// UINT64_MAX; then a trim. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 06_vmm/pool_cost.cu common/standalone.cu -o build/pool_cost
//   (or in 06_vmm/: nvcc -std=c++17 -I.. pool_cost.cu ../common/standalone.cu
//       -o ../build/pool_cost)  (on the same line)
#include "common/check.hpp"
#include "common/step.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace {

// The work of one pass: a kernel writes one value in every 4 KiB page of the block, so that every
// page of it is used.
__global__ void touch_pages(unsigned char* block, std::size_t bytes, unsigned char value) {
    constexpr std::size_t page = 4096;
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x * page;
    for (std::size_t at = (std::size_t{blockIdx.x} * blockDim.x + threadIdx.x) * page; at < bytes;
         at += stride) {
        block[at] = value;
    }
}

// How much memory a pool held (cudaMemPoolAttrReservedMemCurrent) after the loop's
// synchronizations: the least and the most.
struct Held {
    std::uint64_t least = UINT64_MAX;
    std::uint64_t most = 0;
};

// What one pool did in steps 2 to 5.
struct PoolFound {
    bool used = false;             // false: this pool is not available on this device
    Held at_zero, at_max;          // after each synchronization, threshold 0 and UINT64_MAX
    std::uint64_t after_trim = 0;  // held after cudaMemPoolTrimTo(pool, 0)
    std::uint64_t threshold = 0;   // the threshold the pool had, and has again afterwards
};

struct Found {
    PoolFound device, host, managed;
    int host_pools = 0;                      // cudaDevAttrHostMemoryPoolsSupported
    cudaError_t managed_pool = cudaSuccess;  // what cudaMemGetDefaultMemPool answered
};

// The walkthrough's steps: each pool's loop at threshold 0 and at UINT64_MAX, timed wherever
// steps are watched.
constexpr tutorial::Step device_loops[2] = {{"device pool: the loop at threshold 0"},
                                            {"device pool: the loop at UINT64_MAX"}};
constexpr tutorial::Step host_loops[2] = {{"pinned host pool: the loop at threshold 0"},
                                          {"pinned host pool: the loop at UINT64_MAX"}};
constexpr tutorial::Step managed_loops[2] = {{"managed pool: the loop at threshold 0"},
                                             {"managed pool: the loop at UINT64_MAX"}};

// The loop: allocate a block from the pool, a kernel uses it, free it, synchronize; `passes`
// times. At each synchronization a pool that holds more than its release threshold tries to give
// memory back; what it holds afterwards is read each time.
Held allocate_use_free(cudaMemPool_t pool, std::size_t bytes, int passes, cudaStream_t stream) {
    Held held;
    for (int pass = 0; pass < passes; ++pass) {
        void* block = nullptr;
        CUDA_CHECK(cudaMallocFromPoolAsync(&block, bytes, pool, stream));
        touch_pages<<<64, 256, 0, stream>>>(static_cast<unsigned char*>(block), bytes,
                                            static_cast<unsigned char>(pass));
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaFreeAsync(block, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        std::uint64_t now = 0;
        CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &now));
        held.least = std::min(held.least, now);
        held.most = std::max(held.most, now);
    }
    return held;
}

// Sets the pool's release threshold, the freed memory it may hold at a synchronization, and
// returns the one it had. The default pools belong to the whole process: every library in it
// that allocates from them gets the threshold set here, so put back the one found when done.
std::uint64_t set_release_threshold(cudaMemPool_t pool, std::uint64_t bytes) {
    std::uint64_t before = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &before));
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &bytes));
    return before;
}

// Steps 2 to 5, on one pool. Before each loop one pass runs alone, so that the loop shows the
// steady state a long loop runs in.
PoolFound both_thresholds(cudaMemPool_t pool, const tutorial::Step loops[2], std::size_t bytes,
                          int passes, cudaStream_t stream) {
    PoolFound found;
    found.used = true;
    // 2. Threshold 0: at every synchronization the pool tries to give back all it holds, and
    //    the next allocation takes memory from the system again.
    found.threshold = set_release_threshold(pool, 0);
    allocate_use_free(pool, bytes, 1, stream);
    {
        const tutorial::During during(loops[0], stream);
        found.at_zero = allocate_use_free(pool, bytes, passes, stream);
    }
    // 3. Threshold UINT64_MAX: the pool holds on to all it has, and each allocation after the
    //    first is served from memory it kept.
    set_release_threshold(pool, UINT64_MAX);
    allocate_use_free(pool, bytes, 1, stream);
    {
        const tutorial::During during(loops[1], stream);
        found.at_max = allocate_use_free(pool, bytes, passes, stream);
    }
    // 4. The loop is over: give the memory back now rather than at some later synchronization.
    CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &found.after_trim));
    // 5. Put the threshold back as it was found.
    set_release_threshold(pool, found.threshold);
    return found;
}

Found walkthrough(std::size_t bytes, int passes, int device) {
    Found found;
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    // 1. The device's default pool, the one cudaMallocAsync takes from, shared by the whole
    //    process: steps 2 to 5 on it.
    cudaMemPool_t device_pool = nullptr;
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&device_pool, device));
    found.device = both_thresholds(device_pool, device_loops, bytes, passes, stream);

    // 6. A pool of pinned host memory of our own, where the device supports host pools (the GPU
    //    may use its memory once the pool grants it access): steps 2 to 5 on it.
    CUDA_CHECK(
        cudaDeviceGetAttribute(&found.host_pools, cudaDevAttrHostMemoryPoolsSupported, device));
    if (found.host_pools == 1) {
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.handleTypes = cudaMemHandleTypeNone;
        props.location.type = cudaMemLocationTypeHost;
        props.location.id = 0;
        cudaMemPool_t host_pool = nullptr;
        CUDA_CHECK(cudaMemPoolCreate(&host_pool, &props));
        cudaMemAccessDesc access{};
        access.location.type = cudaMemLocationTypeDevice;
        access.location.id = device;
        access.flags = cudaMemAccessFlagsProtReadWrite;
        CUDA_CHECK(cudaMemPoolSetAccess(host_pool, &access, 1));
        found.host = both_thresholds(host_pool, host_loops, bytes, passes, stream);
        CUDA_CHECK(cudaMemPoolDestroy(host_pool));
    }

    // 7. CUDA 13's default pool of managed memory, no preferred location, the whole process's
    //    too: steps 2 to 5 on it. Where there is none, its entry lists cudaErrorNotSupported.
    cudaMemLocation no_preference{cudaMemLocationTypeNone, 0};
    cudaMemPool_t managed_pool = nullptr;
    found.managed_pool =
        cudaMemGetDefaultMemPool(&managed_pool, &no_preference, cudaMemAllocationTypeManaged);
    if (found.managed_pool == cudaErrorNotSupported) {
        (void)cudaGetLastError();  // an answer, not a failure: this pool is left out
    } else {
        CUDA_CHECK(found.managed_pool);
        found.managed = both_thresholds(managed_pool, managed_loops, bytes, passes, stream);
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const int passes = 20;
    const Found found = walkthrough(std::size_t{64} << 20, passes, 0);
    times.print();
    const struct {
        const char* name;
        const PoolFound& pool;
        const tutorial::Step* loops;
    } pools[] = {{"device", found.device, device_loops},
                 {"pinned host", found.host, host_loops},
                 {"managed", found.managed, managed_loops}};
    const auto mib = [](std::uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); };
    std::printf(
        "64 MiB blocks, %d passes: ms a pass at threshold 0 and at UINT64_MAX, and MiB "
        "each pool held after the synchronizations:\n",
        passes);
    for (const auto& p : pools) {
        if (!p.pool.used) {
            std::printf("  %-11s pool: not available on this device\n", p.name);
            continue;
        }
        // The card's number: how many times slower a pass is at threshold 0.
        const double zero_ms = times.median_host_ms(p.loops[0]) / passes;
        const double max_ms = times.median_host_ms(p.loops[1]) / passes;
        std::printf(
            "  %-11s pool: %.3f ms against %.3f ms a pass: %.1fx; held at threshold 0: "
            "%.0f to %.0f, at UINT64_MAX: %.0f to %.0f, after the trim: %.0f\n",
            p.name, zero_ms, max_ms, zero_ms / max_ms, mib(p.pool.at_zero.least),
            mib(p.pool.at_zero.most), mib(p.pool.at_max.least), mib(p.pool.at_max.most),
            mib(p.pool.after_trim));
    }
    if (found.device.used && found.managed.used) {  // the card's last number
        const auto slowdown = [&](const tutorial::Step loops[2]) {
            return times.median_host_ms(loops[0]) / times.median_host_ms(loops[1]);
        };
        std::printf("the managed pool's slowdown is %.3f of the device pool's\n",
                    slowdown(managed_loops) / slowdown(device_loops));
    }
    return 0;
}
#endif
