// Checks of section pools: runs the walkthrough of ../pools.cu round after round (its two
// allocations timed as steps), prints the pool's attributes and what each pool held, and tries
// a pool with maxSize in a child.
#include "06_vmm/pools.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"

#include <cstdlib>
#include <string>
#include <vector>

using tutorial::format;
using tutorial::format_bytes;

namespace {

// The walkthrough `rounds` times: the first round's findings and the medians of its two timed
// allocations (host time until the block is there).
struct Rounds {
    Found first;
    double pool_ms = 0, malloc_ms = 0;
};

Rounds run_rounds(int device, std::size_t bytes, int rounds) {
    tutorial::StepTimes times;
    Rounds r;
    r.first = walkthrough(device, bytes);
    for (int i = 1; i < rounds; ++i) walkthrough(device, bytes);
    r.pool_ms = times.median_host_ms(from_pool);
    r.malloc_ms = times.median_host_ms(from_malloc);
    return r;
}

void print_pools(int device, const Rounds& r, std::size_t bytes, int rounds) {
    const Fresh& f = r.first.fresh;
    const Blocks& b = r.first.blocks;
    std::printf(
        "cudaMemPoolCreate on device %d: allocType Pinned, handleTypes None, location the\n"
        "device, maxSize 0 (no limit of its own). Its attributes, fresh:\n"
        "  release threshold %llu, reserved %s, reuse: follow event dependencies %d,\n"
        "  opportunistic %d, internal dependencies %d\n\n"
        "Its threshold set to UINT64_MAX, n = %s allocated from it and freed, synchronized:\n"
        "it keeps %s. Then cudaMallocAsync(n), which takes from the device's current pool:\n\n",
        device, static_cast<unsigned long long>(f.threshold), format_bytes(f.reserved).c_str(),
        f.follow_events, f.opportunistic, f.internal, format_bytes(bytes).c_str(),
        format_bytes(b.kept).c_str());
    tutorial::Table table({{"the block came from"},
                           {"our pool: reserved", tutorial::Align::right},
                           {"used", tutorial::Align::right},
                           {"default pool: used", tutorial::Align::right}});
    table.add_row({"ours (cudaMallocFromPoolAsync), freed", format_bytes(b.kept),
                   format_bytes(b.kept_used), ""});
    table.add_row({"default (cudaMallocAsync), in use", format_bytes(b.ours_reserved),
                   format_bytes(b.ours_used), format_bytes(b.default_used)});
    table.add_row(
        {"ours, made current (cudaDeviceSetMemPool)", "", format_bytes(b.redirected_used), ""});
    table.print();
    std::printf(
        "\nThe default pool was current again afterwards: %s.\n"
        "Host time until the stream has n (median of %d rounds):\n"
        "  cudaMallocFromPoolAsync from our pool, which kept its memory: %.3f ms\n"
        "  cudaMalloc:                                                   %.3f ms\n\n",
        b.restored ? "yes" : "NO", rounds, r.pool_ms, r.malloc_ms);
}

// The maxSize pool, in a child: its lines printed. The limit is at least 64 MiB: the driver
// reserves a pool's memory in pieces larger than one granule (on 2 x H100, driver 580, a pool of
// maxSize 2 MiB served 1 MiB and then 2 MiB more), so a smaller limit shows the pieces, not the
// limit.
tutorial::ChildResult limit_in_child(int device, std::size_t bytes) {
    const std::size_t at_least = std::size_t{64} << 20;
    const std::size_t limit_bytes = bytes < at_least ? at_least : bytes;
    const tutorial::ChildResult limit =
        tutorial::run_child("pool_limit", {std::to_string(device), std::to_string(limit_bytes)});
    std::printf("A pool created with maxSize = limit = %s, in a child:\n",
                format_bytes(limit_bytes).c_str());
    tutorial::print_child_output(limit);
    std::printf("The child %s.\n\n", limit.describe().c_str());
    return limit;
}

// A new pool's attributes against their defaults: the cudaMemPoolGetAttribute entry gives each
// attribute's default in a parenthesis of its own, "(default 0)", "(default enabled)", so each
// is a claim of its own. Returns whether all four are the defaults.
bool claim_defaults(tutorial::Context& ctx, const Fresh& f) {
    const auto rule = [](int value) { return format("%d", value); };
    const std::string other = "this driver creates pools with another default";
    ctx.claim(tutorial::documented(
        "new_pool_defaults", "a new pool has the release threshold's default, 0", f.threshold == 0,
        format("threshold %llu", static_cast<unsigned long long>(f.threshold)), other,
        tutorial::Entry{"Runtime API reference: cudaMemPoolGetAttribute",
                        "cudaMemPoolAttrReleaseThreshold 0", "defaults"}));
    ctx.claim(tutorial::documented(
        "new_pool_follows_events", "...and cudaMemPoolReuseFollowEventDependencies on (1)",
        f.follow_events == 1, rule(f.follow_events), other,
        tutorial::Entry{"Runtime API reference: cudaMemPoolGetAttribute",
                        "cudaMemPoolReuseFollowEventDependencies enabled", "defaults"}));
    ctx.claim(tutorial::documented(
        "new_pool_opportunistic", "...and cudaMemPoolReuseAllowOpportunistic on (1)",
        f.opportunistic == 1, rule(f.opportunistic), other,
        tutorial::Entry{"Runtime API reference: cudaMemPoolGetAttribute",
                        "cudaMemPoolReuseAllowOpportunistic enabled", "defaults"}));
    ctx.claim(tutorial::documented(
        "new_pool_internal_dependencies", "...and cudaMemPoolReuseAllowInternalDependencies on (1)",
        f.internal == 1, rule(f.internal), other,
        tutorial::Entry{"Runtime API reference: cudaMemPoolGetAttribute",
                        "cudaMemPoolReuseAllowInternalDependencies enabled", "defaults"}));
    return f.threshold == 0 && f.follow_events == 1 && f.opportunistic == 1 && f.internal == 1;
}

}  // namespace

// Child role: a pool that may not grow past a limit, and the default pool beside it. Refused
// calls happen here, in a child, so that they never count against the section's own process.
int child_pool_limit(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    const std::size_t limit = std::strtoull(args.at(1).c_str(), nullptr, 10);
    CUDA_CHECK(cudaSetDevice(device));
    const Limit l = past_the_limit(device, limit);
    std::printf("%-52s -> %s\n", "cudaMallocFromPoolAsync(limit / 2)", cudaGetErrorName(l.half));
    std::printf("%-52s -> %s\n", "cudaMallocFromPoolAsync(limit), half still in use",
                cudaGetErrorName(l.over));
    std::printf("%-52s -> %s\n", "cudaMallocAsync(limit) from the default pool",
                cudaGetErrorName(l.from_default));
    return l.half == cudaSuccess && l.over != cudaSuccess && l.from_default == cudaSuccess ? 0 : 3;
}

tutorial::Result run_pools(tutorial::Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported) != 1) {
        return ctx.skip("memoryPoolsSupported = 0: no memory pools on this device");
    }
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (64 << 20) : (256 << 20));
    const int rounds = tutorial::why_timing_not_judged().empty() ? 7 : 1;  // judged: 7
    const Rounds r = run_rounds(ctx.device, bytes, rounds);
    print_pools(ctx.device, r, bytes, rounds);
    const tutorial::ChildResult limit = limit_in_child(ctx.device, bytes);

    const Fresh& f = r.first.fresh;
    const Blocks& b = r.first.blocks;
    const bool defaults_ok = claim_defaults(ctx, f);
    ctx.claim(tutorial::observed(
        "new_pool_empty", "...and it starts empty", f.reserved == 0,
        format("reserved %s before its first allocation", format_bytes(f.reserved).c_str()),
        "the cudaMemPoolCreate entry does not say whether a new pool "
        "reserves memory before its first allocation"));
    const bool isolated = b.kept >= bytes && b.kept_used == 0 && b.ours_reserved == b.kept &&
                          b.ours_used == 0 && b.default_used >= bytes;
    ctx.claim(tutorial::observed(
        "pools_isolated", "memory one pool keeps is not handed out by another", isolated,
        format("our pool kept %s, still %s reserved and %s used while the default pool gave %s",
               format_bytes(b.kept).c_str(), format_bytes(b.ours_reserved).c_str(),
               format_bytes(b.ours_used).c_str(), format_bytes(b.default_used).c_str()),
        "the entries say which pool an allocation comes from (cudaMallocAsync: the device's "
        "current pool), not that memory another pool keeps stays closed to it"));
    const bool redirected = b.current_was_ours && b.redirected_used >= bytes && b.restored;
    ctx.claim(tutorial::documented(
        "set_mem_pool_redirects",
        "cudaDeviceSetMemPool makes the pool the device's current one, and cudaMallocAsync takes "
        "from it",
        redirected,
        format("cudaDeviceGetMemPool returned %s; our pool's used memory %s",
               b.current_was_ours ? "our pool" : "ANOTHER pool",
               format_bytes(b.redirected_used).c_str()),
        "the device's current pool did not change",
        tutorial::Entry{"Runtime API reference: cudaDeviceGetMemPool", "cudaDeviceSetMemPool",
                        "returns"}));
    const std::string refused =
        tutorial::child_answer(limit, "cudaMallocFromPoolAsync(limit), half");
    ctx.claim(tutorial::documented(
        "max_size_is_a_limit", "a pool's maxSize is a hard limit, whatever the device has free",
        limit.succeeded(),
        "past the limit: " + refused +
            "; the default pool: " + tutorial::child_answer(limit, "cudaMallocAsync(limit) from"),
        "the pool grew past maxSize, or the default pool refused too",
        tutorial::Entry{"Runtime API reference: cudaMemPoolCreate", "maxSize", "can"}));
    // Below 64 MiB a cudaMalloc is cheap enough to come near the synchronize the pool's
    // allocation is timed with.
    ctx.claim(tutorial::at_least(
                  "pool_cheaper",
                  format("allocating %s from a pool that kept its memory is far cheaper than "
                         "cudaMalloc (cudaMalloc / pool)",
                         format_bytes(bytes).c_str()),
                  r.malloc_ms / r.pool_ms, 5.0, "x",
                  "cudaMalloc is cached by this driver, or the pool did not keep its memory")
                  .again([&] {
                      const Rounds n = run_rounds(ctx.device, bytes, rounds);
                      return n.malloc_ms / n.pool_ms;
                  }),
              tutorial::why_too_small(bytes, 64 << 20,
                                      "a cudaMalloc that small costs about as much as the "
                                      "synchronize the pool's allocation is timed with"));
    return ctx.verdict(defaults_ok && redirected && limit.succeeded(),
                       "the pool's attributes, cudaDeviceSetMemPool and maxSize behaved as "
                       "documented");
}

TUTORIAL_SECTION(pools, run_pools);
TUTORIAL_CHILD(pool_limit, child_pool_limit);
