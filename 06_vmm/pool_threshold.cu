// Section pool_threshold: what the stream-ordered allocator's pool keeps. Memory freed with
// cudaFreeAsync stays in the pool until a synchronize, when a pool above its release threshold
// tries to give it back.
// Built alone, from the course's folder (mkdir -p build first), then ./build/pool_threshold:
//   nvcc -std=c++17 -I. 06_vmm/pool_threshold.cu common/standalone.cu -o build/pool_threshold
//   (or in 06_vmm/: nvcc -std=c++17 -I.. pool_threshold.cu ../common/standalone.cu
//       -o ../build/pool_threshold)  (on the same line)
#include "common/check.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>

namespace {

struct PoolState {
    std::uint64_t reserved = 0, used = 0, reserved_high = 0, used_high = 0;
};

// cudaMallocAsync takes from the device's current pool: its default pool, unless the
// program set another.
cudaMemPool_t default_pool(int device) {
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    return pool;
}

// What a pool holds: memory reserved from the device, memory handed out, and the peaks of
// both.
PoolState read_pool(cudaMemPool_t pool) {
    PoolState s;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &s.reserved));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &s.used));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &s.reserved_high));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &s.used_high));
    return s;
}

// How much freed memory the pool may keep at a synchronization instead of giving it back
// to the device: the default, 0, keeps nothing.
std::uint64_t threshold(cudaMemPool_t pool) {
    std::uint64_t bytes = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &bytes));
    return bytes;
}

void set_threshold(cudaMemPool_t pool, std::uint64_t bytes) {
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &bytes));
}

// Allocate and free in stream order, then synchronize: the synchronization is when the
// pool compares what it holds with its threshold and tries to give the rest back.
void allocate_free_synchronize(std::size_t bytes, cudaStream_t stream) {
    void* p = nullptr;
    CUDA_CHECK(cudaMallocAsync(&p, bytes, stream));
    CUDA_CHECK(cudaFreeAsync(p, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Give back what the pool keeps, down to `keep` bytes, without waiting for a
// synchronization or lowering the threshold.
void trim(cudaMemPool_t pool, std::size_t keep) {
    CUDA_CHECK(cudaMemPoolTrimTo(pool, keep));
}

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step again_at_zero{"allocating again after a synchronize, threshold 0"};
constexpr tutorial::Step again_at_max{"allocating again after a synchronize, threshold UINT64_MAX"};

// A cudaMallocAsync of `bytes` until the stream has it, as the step `step`; then freed,
// synchronized.
void timed_allocation(const tutorial::Step& step, std::size_t bytes, cudaStream_t stream) {
    void* p = nullptr;
    {
        const tutorial::During during(step, stream);
        CUDA_CHECK(cudaMallocAsync(&p, bytes, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    CUDA_CHECK(cudaFreeAsync(p, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

// What the walkthrough found: the default threshold, and the pool after each of four steps.
struct Found {
    std::uint64_t default_threshold = 0;
    PoolState allocated, freed, kept, trimmed;
};

Found walkthrough(int device, std::size_t bytes) {
    Found found;
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    // 1. The device's default pool, its threshold, and its high-water marks reset (writing 0).
    cudaMemPool_t pool = default_pool(device);
    found.default_threshold = threshold(pool);
    std::uint64_t zero = 0;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));

    // 2. With the default threshold: allocate and synchronize, then free and synchronize.
    void* p = nullptr;
    CUDA_CHECK(cudaMallocAsync(&p, bytes, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    found.allocated = read_pool(pool);
    CUDA_CHECK(cudaFreeAsync(p, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    found.freed = read_pool(pool);
    timed_allocation(again_at_zero, bytes, stream);

    // 3. Threshold UINT64_MAX: the pool keeps everything it is given back.
    set_threshold(pool, UINT64_MAX);
    allocate_free_synchronize(bytes, stream);
    found.kept = read_pool(pool);
    timed_allocation(again_at_max, bytes, stream);

    // 4. A trim gives it back without waiting for a synchronize; then the threshold goes back
    //    to what it was, since the default pool is the whole process's.
    trim(pool, 0);
    found.trimmed = read_pool(pool);
    set_threshold(pool, found.default_threshold);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::size_t bytes = std::size_t{1} << 30;
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(0, bytes);
    times.print();
    // The card's number: what the pool kept, and what the next allocation cost for it.
    const double emptied_ms = times.median_host_ms(again_at_zero);
    const double kept_ms = times.median_host_ms(again_at_max);
    std::printf(
        "%llu bytes kept after the free and synchronize (threshold %llu), so the next allocation "
        "of %zu MiB took %.3f ms, %.0f times the %.3f ms from the pool set to keep its memory "
        "(UINT64_MAX)\n",
        static_cast<unsigned long long>(found.freed.reserved),
        static_cast<unsigned long long>(found.default_threshold), bytes >> 20, emptied_ms,
        emptied_ms / kept_ms, kept_ms);
    std::printf(
        "default threshold %llu; reserved after the free and synchronize: %llu bytes; "
        "with UINT64_MAX: %llu bytes; after the trim: %llu bytes\n",
        static_cast<unsigned long long>(found.default_threshold),
        static_cast<unsigned long long>(found.freed.reserved),
        static_cast<unsigned long long>(found.kept.reserved),
        static_cast<unsigned long long>(found.trimmed.reserved));
    return 0;
}
#endif
