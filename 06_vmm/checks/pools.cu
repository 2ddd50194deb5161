// Checks of section pools: creates the pool of ../pools.cu, reads its fresh attributes, shows
// that what it keeps is not handed out by the default pool, redirects cudaMallocAsync to it,
// times it against cudaMalloc, and tries a pool with maxSize in a child.
#include "06_vmm/pools.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::format;
using tutorial::format_bytes;

namespace {

constexpr int timed_allocations = 7;

std::uint64_t attribute(cudaMemPool_t pool, cudaMemPoolAttr which) {
    std::uint64_t value = 0;  // the 64-bit attributes; the int ones read into the low half
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, which, &value));
    return value;
}

struct Fresh {
    std::uint64_t threshold, reserved;
    int follow_events = 0, opportunistic = 0, internal = 0;
};

// The attributes of a pool nobody has used yet.
Fresh fresh_attributes(cudaMemPool_t pool) {
    Fresh f{attribute(pool, cudaMemPoolAttrReleaseThreshold),
            attribute(pool, cudaMemPoolAttrReservedMemCurrent)};
    CUDA_CHECK(
        cudaMemPoolGetAttribute(pool, cudaMemPoolReuseFollowEventDependencies, &f.follow_events));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &f.opportunistic));
    CUDA_CHECK(
        cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &f.internal));
    return f;
}

struct Isolation {
    std::uint64_t kept = 0;             // our pool's reserved memory after free + synchronize
    std::uint64_t kept_used = 0;        // ...and its used memory then
    std::uint64_t ours_reserved = 0;    // ...while the default pool hands out n
    std::uint64_t ours_used = 0;        // ...the same
    std::uint64_t default_used = 0;     // the default pool's used memory then
    void* ours = nullptr;               // the block our pool gave
    void* from_default = nullptr;       // what cudaMallocAsync gave meanwhile
    bool current_was_ours = false;      // cudaDeviceGetMemPool after cudaDeviceSetMemPool
    void* redirected = nullptr;         // cudaMallocAsync once our pool is the current one
    std::uint64_t redirected_used = 0;  // our pool's used memory then
    bool restored = false;              // the default pool is current again
};

// Our pool keeps n; cudaMallocAsync from the default pool does not touch it; once our pool is
// the device's current pool, cudaMallocAsync takes from it.
Isolation check_isolation(int device, cudaMemPool_t ours, std::size_t bytes, cudaStream_t stream) {
    Isolation r;
    cudaMemPool_t default_pool = nullptr;
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&default_pool, device));
    r.ours = allocate_from(ours, bytes, stream);
    CUDA_CHECK(cudaFreeAsync(r.ours, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    r.kept = attribute(ours, cudaMemPoolAttrReservedMemCurrent);
    r.kept_used = attribute(ours, cudaMemPoolAttrUsedMemCurrent);

    CUDA_CHECK(cudaMallocAsync(&r.from_default, bytes, stream));  // the current pool: default
    CUDA_CHECK(cudaStreamSynchronize(stream));
    r.ours_reserved = attribute(ours, cudaMemPoolAttrReservedMemCurrent);
    r.ours_used = attribute(ours, cudaMemPoolAttrUsedMemCurrent);
    r.default_used = attribute(default_pool, cudaMemPoolAttrUsedMemCurrent);
    CUDA_CHECK(cudaFreeAsync(r.from_default, stream));

    make_current(device, ours);
    r.current_was_ours = current_pool(device) == ours;
    CUDA_CHECK(cudaMallocAsync(&r.redirected, bytes, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    r.redirected_used = attribute(ours, cudaMemPoolAttrUsedMemCurrent);
    CUDA_CHECK(cudaFreeAsync(r.redirected, stream));
    make_current(device, default_pool);  // the setting is process-wide
    r.restored = current_pool(device) == default_pool;
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return r;
}

// Host time until the stream has n bytes: from our pool, which keeps its memory, and from
// cudaMalloc, which maps fresh memory every time. Medians of several, after one warm-up.
struct Costs {
    double pool_ms = 0, malloc_ms = 0;
};

Costs time_allocations(cudaMemPool_t ours, std::size_t bytes, cudaStream_t stream) {
    Costs c;
    c.pool_ms = tutorial::median_ms(1, timed_allocations, [&] {
        tutorial::HostTimer timer;
        void* p = allocate_from(ours, bytes, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const double ms = timer.elapsed_ms();
        CUDA_CHECK(cudaFreeAsync(p, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        return ms;
    });
    c.malloc_ms = tutorial::median_ms(1, timed_allocations, [&] {
        void* p = nullptr;
        tutorial::HostTimer timer;
        CUDA_CHECK(cudaMalloc(&p, bytes));
        const double ms = timer.elapsed_ms();
        CUDA_CHECK(cudaFree(p));
        return ms;
    });
    return c;
}

struct PoolsResult {
    Fresh fresh;
    Isolation iso;
    Costs costs;
};

PoolsResult measure_pools(int device, std::size_t bytes) {
    cudaMemPool_t pool = create_pool(device);
    PoolsResult r;
    r.fresh = fresh_attributes(pool);
    keep_everything(pool);  // the default pool is untouched
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    r.iso = check_isolation(device, pool, bytes, stream);
    r.costs = time_allocations(pool, bytes, stream);
    CUDA_CHECK(cudaStreamDestroy(stream));
    destroy_pool(pool);  // gives its memory back; nothing is allocated from it
    return r;
}

void print_pools(int device, const PoolsResult& r, std::size_t bytes) {
    std::printf(
        "cudaMemPoolCreate on device %d: allocType Pinned, handleTypes None, location the\n"
        "device, maxSize 0 (no limit of its own). Its attributes, fresh:\n"
        "  release threshold %llu, reserved %s, reuse: follow event dependencies %d,\n"
        "  opportunistic %d, internal dependencies %d\n\n",
        device, static_cast<unsigned long long>(r.fresh.threshold),
        format_bytes(r.fresh.reserved).c_str(), r.fresh.follow_events, r.fresh.opportunistic,
        r.fresh.internal);
    std::printf(
        "Its threshold set to UINT64_MAX, n = %s allocated from it and freed, synchronized:\n"
        "it keeps %s. Then cudaMallocAsync(n), which takes from the device's current pool:\n\n",
        format_bytes(bytes).c_str(), format_bytes(r.iso.kept).c_str());
    tutorial::Table table({{"pool the block came from"},
                           {"block", tutorial::Align::right},
                           {"our pool: reserved", tutorial::Align::right},
                           {"used", tutorial::Align::right},
                           {"default pool: used", tutorial::Align::right}});
    table.add_row({"ours (cudaMallocFromPoolAsync), freed", format("%p", r.iso.ours),
                   format_bytes(r.iso.kept), format_bytes(r.iso.kept_used), ""});
    table.add_row({"default (cudaMallocAsync), in use", format("%p", r.iso.from_default),
                   format_bytes(r.iso.ours_reserved), format_bytes(r.iso.ours_used),
                   format_bytes(r.iso.default_used)});
    table.add_row({"ours, made current (cudaDeviceSetMemPool)", format("%p", r.iso.redirected), "",
                   format_bytes(r.iso.redirected_used), ""});
    table.print();
    std::printf(
        "\nThe default pool was current again afterwards: %s.\n"
        "Host time until the stream has n (median of %d):\n"
        "  cudaMallocFromPoolAsync from our pool, which kept its memory: %.3f ms\n"
        "  cudaMalloc:                                                   %.3f ms\n\n",
        r.iso.restored ? "yes" : "NO", timed_allocations, r.costs.pool_ms, r.costs.malloc_ms);
}

}  // namespace

// Child role: a pool that may not grow past a limit refuses an allocation that would take it
// there, while the default pool, with no such limit, gives the same size. Refused calls happen
// here, in a child, so that they never count against the section's own process.
int child_pool_limit(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    const std::size_t limit = std::strtoull(args.at(1).c_str(), nullptr, 10);
    CUDA_CHECK(cudaSetDevice(device));
    const cudaMemPoolProps props = pool_properties(device, limit);
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    void* half = nullptr;
    void* over = nullptr;
    void* from_default = nullptr;
    const cudaError_t first = cudaMallocFromPoolAsync(&half, limit / 2, pool, stream);
    const cudaError_t second = cudaMallocFromPoolAsync(&over, limit, pool, stream);
    (void)cudaGetLastError();
    const cudaError_t elsewhere = cudaMallocAsync(&from_default, limit, stream);
    std::printf("%-52s -> %s\n", "cudaMallocFromPoolAsync(limit / 2)", cudaGetErrorName(first));
    std::printf("%-52s -> %s\n", "cudaMallocFromPoolAsync(limit), half still in use",
                cudaGetErrorName(second));
    std::printf("%-52s -> %s\n", "cudaMallocAsync(limit) from the default pool",
                cudaGetErrorName(elsewhere));
    if (first == cudaSuccess) CUDA_CHECK(cudaFreeAsync(half, stream));
    if (second == cudaSuccess) CUDA_CHECK(cudaFreeAsync(over, stream));
    if (elsewhere == cudaSuccess) CUDA_CHECK(cudaFreeAsync(from_default, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    return first == cudaSuccess && second != cudaSuccess && elsewhere == cudaSuccess ? 0 : 3;
}

tutorial::Result run_pools(tutorial::Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported) != 1) {
        return ctx.skip("memoryPoolsSupported = 0: no memory pools on this device");
    }
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (64 << 20) : (256 << 20));
    const PoolsResult r = measure_pools(ctx.device, bytes);
    print_pools(ctx.device, r, bytes);
    const tutorial::ChildResult limit =
        tutorial::run_child("pool_limit", {std::to_string(ctx.device), std::to_string(bytes)});
    std::printf("A pool created with maxSize = limit = %s, in a child:\n",
                format_bytes(bytes).c_str());
    tutorial::print_child_output(limit);
    std::printf("The child %s.\n\n", limit.describe().c_str());

    const Fresh& f = r.fresh;
    const bool defaults_ok =
        f.threshold == 0 && f.follow_events == 1 && f.opportunistic == 1 && f.internal == 1;
    ctx.claim(tutorial::documented(
        "a new pool has the attributes' defaults: threshold 0 and every reuse rule on", defaults_ok,
        format("threshold %llu, reuse rules %d %d %d", static_cast<unsigned long long>(f.threshold),
               f.follow_events, f.opportunistic, f.internal),
        "this driver creates pools with other defaults",
        "Runtime API reference: cudaMemPoolGetAttribute"));
    ctx.claim(tutorial::observed(
        "...and it starts empty", f.reserved == 0,
        format("reserved %s before its first allocation", format_bytes(f.reserved).c_str()),
        "the cudaMemPoolCreate entry does not say whether a new pool "
        "reserves memory before its first allocation"));
    const Isolation& iso = r.iso;
    const bool isolated = iso.kept >= bytes && iso.kept_used == 0 &&
                          iso.ours_reserved == iso.kept && iso.ours_used == 0 &&
                          iso.default_used >= bytes;
    ctx.claim(tutorial::documented(
        "memory one pool keeps is not handed out by another", isolated,
        format("our pool kept %s, still %s reserved and %s used while the default pool gave %s",
               format_bytes(iso.kept).c_str(), format_bytes(iso.ours_reserved).c_str(),
               format_bytes(iso.ours_used).c_str(), format_bytes(iso.default_used).c_str()),
        "cudaMallocAsync took our pool's memory",
        "Runtime API reference: cudaMallocAsync, cudaMemPoolSetAttribute"));
    const bool redirected = iso.current_was_ours && iso.redirected_used >= bytes && iso.restored;
    ctx.claim(tutorial::documented(
        "cudaDeviceSetMemPool makes cudaMallocAsync take from the pool", redirected,
        format("our pool's used memory %s, the block %s the one it kept",
               format_bytes(iso.redirected_used).c_str(),
               iso.redirected == iso.ours ? "is" : "is not"),
        "the device's current pool did not change", "Runtime API reference: cudaDeviceSetMemPool"));
    const std::string refused =
        tutorial::child_answer(limit, "cudaMallocFromPoolAsync(limit), half");
    ctx.claim(tutorial::documented(
        "a pool's maxSize is a hard limit, whatever the device has free", limit.succeeded(),
        "past the limit: " + refused +
            "; the default pool: " + tutorial::child_answer(limit, "cudaMallocAsync(limit) from"),
        "the pool grew past maxSize, or the default pool refused too",
        "Runtime API reference: cudaMemPoolCreate"));
    ctx.claim(tutorial::at_least(
        format("an allocation from a pool that kept its memory is far cheaper than cudaMalloc of "
               "%s (cudaMalloc / pool)",
               format_bytes(bytes).c_str()),
        r.costs.malloc_ms / r.costs.pool_ms, 5.0, "x",
        "cudaMalloc is cached by this driver, or the pool did not keep its memory"));
    return ctx.verdict(defaults_ok && isolated && redirected && limit.succeeded(),
                       "the pool's attributes, its isolation from the default pool, "
                       "cudaDeviceSetMemPool and maxSize behaved as documented");
}

TUTORIAL_SECTION(pools, run_pools);
TUTORIAL_CHILD(pool_limit, child_pool_limit);
