// Section pools: a pool of one's own, with its own properties (where its memory lives, how large
// it may grow) and attributes, apart from the default pool.
// Built alone, from the course's folder (mkdir -p build first), then ./build/pools:
//   nvcc -std=c++17 -I. 06_vmm/pools.cu common/standalone.cu -o build/pools
//   (or in 06_vmm/: nvcc -std=c++17 -I.. pools.cu ../common/standalone.cu -o ../build/pools)
#include "common/check.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>

namespace {

// A pool of our own: device memory on `device`, not shareable with other processes.
cudaMemPoolProps pool_properties(int device, std::size_t max_size) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;  // the only type for device pools
    props.handleTypes = cudaMemHandleTypeNone;      // not shareable with other processes
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    props.maxSize = max_size;  // 0: as large as the device allows
    return props;
}

std::uint64_t attribute(cudaMemPool_t pool, cudaMemPoolAttr which) {
    std::uint64_t value = 0;  // the 64-bit attributes
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, which, &value));
    return value;
}

// The attributes of a pool nobody has used yet.
struct Fresh {
    std::uint64_t threshold = 0, reserved = 0;
    int follow_events = 0, opportunistic = 0, internal = 0;  // the reuse rules
};

Fresh fresh_attributes(cudaMemPool_t pool);  // (its code follows the walkthrough)

// Where the blocks came from, and what each pool held meanwhile.
struct Blocks {
    std::uint64_t kept = 0, kept_used = 0;  // our pool after a block was freed, synchronized
    std::uint64_t ours_reserved = 0, ours_used = 0, default_used = 0;  // ...while the default
                                                                       // pool hands out a block
    bool current_was_ours = false;      // cudaDeviceGetMemPool after cudaDeviceSetMemPool
    std::uint64_t redirected_used = 0;  // our pool's used memory once it is the current one
    bool restored = false;              // the default pool current again
};

// Our pool (threshold UINT64_MAX) keeps a block; cudaMallocAsync takes from the device's current
// pool, the default one; once ours is made current, from ours (its code follows the walkthrough).
Blocks three_ways(int device, cudaMemPool_t ours, std::size_t bytes, cudaStream_t stream);

// What the walkthrough found.
struct Found {
    Fresh fresh;
    Blocks blocks;
};

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step from_pool{"a block from the pool that kept its memory"};
constexpr tutorial::Step from_malloc{"a block of the same size from cudaMalloc"};

Found walkthrough(int device, std::size_t bytes) {
    Found found;
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    // 1. A pool of our own, and its attributes before anything is allocated from it.
    const cudaMemPoolProps props = pool_properties(device, 0);
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    found.fresh = fresh_attributes(pool);
    // 2. Unlike the default pool (threshold 0), ours keeps all the memory it is given back.
    std::uint64_t keep_all = UINT64_MAX;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
    // 3. A block from it by name, and from the device's current pool, before and after ours is
    //    made the current one.
    found.blocks = three_ways(device, pool, bytes, stream);
    // 4. What a block costs from a pool that kept its memory, and from cudaMalloc.
    void* p = nullptr;
    {
        const tutorial::During during(from_pool, stream);
        CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes, pool, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    CUDA_CHECK(cudaFreeAsync(p, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    {
        const tutorial::During during(from_malloc);
        CUDA_CHECK(cudaMalloc(&p, bytes));
    }
    CUDA_CHECK(cudaFree(p));
    // 5. Destroying the pool gives its memory back to the device.
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return found;
}

// Reads them: the release threshold, what the pool has reserved, and its three reuse rules.
Fresh fresh_attributes(cudaMemPool_t pool) {
    Fresh f;
    f.threshold = attribute(pool, cudaMemPoolAttrReleaseThreshold);
    f.reserved = attribute(pool, cudaMemPoolAttrReservedMemCurrent);
    CUDA_CHECK(
        cudaMemPoolGetAttribute(pool, cudaMemPoolReuseFollowEventDependencies, &f.follow_events));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &f.opportunistic));
    CUDA_CHECK(
        cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &f.internal));
    return f;
}

// Our pool (threshold UINT64_MAX) keeps a block; cudaMallocAsync takes from the device's current
// pool, the default one; once ours is made current (process-wide: set it back after), from ours.
Blocks three_ways(int device, cudaMemPool_t ours, std::size_t bytes, cudaStream_t stream) {
    Blocks b;
    cudaMemPool_t default_pool = nullptr;
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&default_pool, device));
    void* p = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes, ours, stream));  // from our pool, by name
    CUDA_CHECK(cudaFreeAsync(p, stream));                          // back to the pool it came from
    CUDA_CHECK(cudaStreamSynchronize(stream));
    b.kept = attribute(ours, cudaMemPoolAttrReservedMemCurrent);
    b.kept_used = attribute(ours, cudaMemPoolAttrUsedMemCurrent);
    CUDA_CHECK(cudaMallocAsync(&p, bytes, stream));  // from the current pool: the default
    CUDA_CHECK(cudaStreamSynchronize(stream));
    b.ours_reserved = attribute(ours, cudaMemPoolAttrReservedMemCurrent);
    b.ours_used = attribute(ours, cudaMemPoolAttrUsedMemCurrent);
    b.default_used = attribute(default_pool, cudaMemPoolAttrUsedMemCurrent);
    CUDA_CHECK(cudaFreeAsync(p, stream));
    CUDA_CHECK(cudaDeviceSetMemPool(device, ours));  // every cudaMallocAsync on `device` now
    cudaMemPool_t current = nullptr;
    CUDA_CHECK(cudaDeviceGetMemPool(&current, device));
    b.current_was_ours = current == ours;
    CUDA_CHECK(cudaMallocAsync(&p, bytes, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    b.redirected_used = attribute(ours, cudaMemPoolAttrUsedMemCurrent);
    CUDA_CHECK(cudaFreeAsync(p, stream));
    CUDA_CHECK(cudaDeviceSetMemPool(device, default_pool));
    CUDA_CHECK(cudaDeviceGetMemPool(&current, device));
    b.restored = current == default_pool;
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return b;
}

// A pool that may not grow past `limit`: half of it, then all of it with the half still in use,
// then the same from the default pool, which has no such limit. Each returns its answer.
struct Limit {
    cudaError_t half, over, from_default;
};

Limit past_the_limit(int device, std::size_t limit) {
    const cudaMemPoolProps props = pool_properties(device, limit);
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    void *half = nullptr, *over = nullptr, *elsewhere = nullptr;
    Limit l{};
    l.half = cudaMallocFromPoolAsync(&half, limit / 2, pool, stream);
    l.over = cudaMallocFromPoolAsync(&over, limit, pool, stream);
    (void)cudaGetLastError();  // the refusal is reported; the next calls are not affected
    l.from_default = cudaMallocAsync(&elsewhere, limit, stream);
    for (void* p : {half, over, elsewhere})
        if (p != nullptr) CUDA_CHECK(cudaFreeAsync(p, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    return l;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::size_t bytes = std::size_t{256} << 20;
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(0, bytes);
    times.print();
    const Limit limit = past_the_limit(0, bytes);
    // The card's number: a block from a pool that kept its memory against a cudaMalloc.
    const double pool_ms = times.median_host_ms(from_pool);
    const double malloc_ms = times.median_host_ms(from_malloc);
    std::printf(
        "%zu MiB: from the pool that kept its memory %.3f ms, cudaMalloc %.3f ms: %.1f "
        "times cheaper; past a pool's maxSize of %zu MiB: %s, the default pool: %s\n",
        bytes >> 20, pool_ms, malloc_ms, malloc_ms / pool_ms, bytes >> 20,
        cudaGetErrorName(limit.over), cudaGetErrorName(limit.from_default));
    std::printf(
        "a new pool: threshold %llu, reserved %llu; ours kept %llu bytes; the current "
        "pool was ours: %s; past maxSize: %s\n",
        static_cast<unsigned long long>(found.fresh.threshold),
        static_cast<unsigned long long>(found.fresh.reserved),
        static_cast<unsigned long long>(found.blocks.kept),
        found.blocks.current_was_ours ? "yes" : "no", cudaGetErrorName(limit.over));
    return 0;
}
#endif
