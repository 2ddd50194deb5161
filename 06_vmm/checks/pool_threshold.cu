// Checks of section pool_threshold: walks the default pool through the steps of
// ../pool_threshold.cu, reads its attributes after each against what the entries promise, and
// times the next allocation with threshold 0 and with UINT64_MAX.
#include "06_vmm/pool_threshold.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;

namespace {

constexpr int timed_allocations = 5;

struct Step {
    std::string what;
    PoolState state;
    std::string promised;  // what the entries promise about the attributes after it, in words
    bool as_promised;
};

// The host time of a cudaMallocAsync of `bytes` until the stream has it: median of several, each
// followed by cudaFreeAsync and a synchronize, which is when the pool applies its threshold.
double allocation_ms(cudaStream_t stream, std::size_t bytes) {
    return tutorial::median_ms(1, timed_allocations, [&] {
        void* p = nullptr;
        tutorial::HostTimer timer;
        CUDA_CHECK(cudaMallocAsync(&p, bytes, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const double ms = timer.elapsed_ms();
        CUDA_CHECK(cudaFreeAsync(p, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        return ms;
    });
}

struct ThresholdResult {
    std::uint64_t default_threshold = 0;
    std::vector<Step> steps;
    double ms_emptied = 0;  // next allocation, threshold 0
    double ms_kept = 0;     // next allocation, threshold UINT64_MAX
};

void step(ThresholdResult& r, cudaMemPool_t pool, std::string what, std::string promised,
          bool (*holds)(const PoolState&, std::uint64_t), std::uint64_t bytes) {
    const PoolState s = read_pool(pool);
    r.steps.push_back({std::move(what), s, std::move(promised), holds(s, bytes)});
}

ThresholdResult walk_thresholds(int device, std::size_t bytes) {
    ThresholdResult r;
    cudaMemPool_t pool = default_pool(device);
    r.default_threshold = threshold(pool);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::uint64_t zero = 0;  // writing 0 resets a high-water mark
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
    void* p = nullptr;
    CUDA_CHECK(cudaMallocAsync(&p, bytes, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    step(
        r, pool, "threshold 0: cudaMallocAsync, synchronize", "used >= n, reserved >= used",
        [](const PoolState& s, std::uint64_t n) { return s.used >= n && s.reserved >= s.used; },
        bytes);
    CUDA_CHECK(cudaFreeAsync(p, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    step(
        r, pool, "cudaFreeAsync, synchronize", "used 0; reserved: what the try left",
        [](const PoolState& s, std::uint64_t) { return s.used == 0; }, bytes);
    r.ms_emptied = allocation_ms(stream, bytes);

    set_threshold(pool, UINT64_MAX);  // keep everything
    allocate_free_synchronize(bytes, stream);
    step(
        r, pool, "threshold UINT64_MAX: allocate, free, synchronize",
        "used 0, reserved >= n: kept for the next allocation",
        [](const PoolState& s, std::uint64_t n) { return s.used == 0 && s.reserved >= n; }, bytes);
    r.ms_kept = allocation_ms(stream, bytes);
    trim(pool, 0);
    step(
        r, pool, "cudaMemPoolTrimTo(pool, 0)", "high-water marks >= n; reserved: what it released",
        [](const PoolState& s, std::uint64_t n) {
            return s.reserved_high >= n && s.used_high >= n;
        },
        bytes);
    set_threshold(pool, r.default_threshold);  // the default pool is the whole process's
    CUDA_CHECK(cudaStreamDestroy(stream));
    return r;
}

}  // namespace

tutorial::Result run_pool_threshold(tutorial::Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported) != 1) {
        return ctx.skip("memoryPoolsSupported = 0: no cudaMallocAsync on this device");
    }
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (256 << 20) : (1 << 30));
    std::printf(
        "The default pool of device %d (cudaDeviceGetDefaultMemPool), n = %s. Each row: a step,\n"
        "then cudaMemPoolGetAttribute for ReservedMemCurrent, UsedMemCurrent, ReservedMemHigh and\n"
        "UsedMemHigh (high-water marks reset to 0 first).\n\n",
        ctx.device, tutorial::format_bytes(bytes).c_str());
    const ThresholdResult r = walk_thresholds(ctx.device, bytes);
    tutorial::Table table({{"step"},
                           {"reserved", tutorial::Align::right},
                           {"used", tutorial::Align::right},
                           {"reserved high", tutorial::Align::right},
                           {"used high", tutorial::Align::right},
                           {"the entries promise"},
                           {"as promised"}});
    int as_promised = 0;
    for (const Step& s : r.steps) {
        as_promised += s.as_promised;
        table.add_row(
            {s.what, tutorial::format_bytes(s.state.reserved), tutorial::format_bytes(s.state.used),
             tutorial::format_bytes(s.state.reserved_high),
             tutorial::format_bytes(s.state.used_high), s.promised, s.as_promised ? "yes" : "NO"});
    }
    table.print();
    const int steps = static_cast<int>(r.steps.size());
    std::printf(
        "\nThe default release threshold was %llu. A cudaMallocAsync of n until the stream has\n"
        "it (median of %d, each followed by cudaFreeAsync and a synchronize):\n"
        "  threshold 0, pool emptied at every synchronize: %.3f ms\n"
        "  threshold UINT64_MAX, the memory kept:           %.3f ms\n\n"
        "Where the threshold 0 pool gave its memory back, every allocation after a synchronize\n"
        "maps fresh physical memory, as cudaMalloc would; a threshold as large as the working set\n"
        "makes it a lookup.\n\n",
        static_cast<unsigned long long>(r.default_threshold), timed_allocations, r.ms_emptied,
        r.ms_kept);
    const bool emptied = r.steps[1].state.reserved == 0;
    ctx.claim(tutorial::documented(
        "the default pool's release threshold is 0", r.default_threshold == 0,
        format("threshold %llu", static_cast<unsigned long long>(r.default_threshold)),
        "the process set another threshold", "Runtime API reference: cudaMemPoolGetAttribute"));
    ctx.claim(tutorial::observed(
        "...and at a synchronize the pool gave all its memory back", emptied,
        format("reserved after the synchronize: %s",
               tutorial::format_bytes(r.steps[1].state.reserved).c_str()),
        "the cudaMemPoolAttrReleaseThreshold entry says the allocator will try to release memory "
        "above the threshold at a synchronize, not how much it gives back"));
    ctx.claim(tutorial::documented(
        "with threshold UINT64_MAX the pool keeps the freed memory through a synchronize",
        r.steps[2].as_promised,
        format("reserved %s after the synchronize, used %s",
               tutorial::format_bytes(r.steps[2].state.reserved).c_str(),
               tutorial::format_bytes(r.steps[2].state.used).c_str()),
        "the threshold was not applied", "Runtime API reference: cudaMemPoolSetAttribute"));
    ctx.claim(tutorial::observed(
        "...until cudaMemPoolTrimTo(pool, 0) gave it all back", r.steps[3].state.reserved == 0,
        format("reserved %s after the trim",
               tutorial::format_bytes(r.steps[3].state.reserved).c_str()),
        "the cudaMemPoolTrimTo entry releases only what the allocator can safely release"));
    // The comparison needs an emptied pool: where this driver kept the memory at threshold 0,
    // both allocations were lookups.
    ctx.claim(
        tutorial::at_least(
            "an allocation from an emptied pool costs more than one from a pool that kept "
            "the memory (threshold 0 / UINT64_MAX)",
            r.ms_emptied / r.ms_kept, 3.0, "x", "mapping memory costs no more than a lookup here"),
        emptied ? "" : "the pool kept memory at threshold 0, so nothing was emptied");
    return ctx.verdict(as_promised == steps,
                       format("%d of %d steps left the pool's attributes as the entries promise",
                              as_promised, steps));
}

TUTORIAL_SECTION(pool_threshold, run_pool_threshold);
