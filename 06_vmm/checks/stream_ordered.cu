// Checks of section stream_ordered: runs the steps of ../stream_ordered.cu, prints what each call
// cost and what each stream saw, and states the lesson as claims.
#include "06_vmm/stream_ordered.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <cstdio>

using tutorial::format;

tutorial::Result run_stream_ordered(tutorial::Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported) != 1) {
        return ctx.skip("memoryPoolsSupported = 0: no cudaMallocAsync on this device");
    }
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (64 << 20) : (256 << 20));
    const double busy_ms = ctx.quick() ? 50.0 : 200.0;
    std::printf(
        "1. A kernel of %.0f ms runs on another stream; right after its launch, cudaFree of a\n"
        "   %s cudaMalloc block, then (same kernel again) cudaFreeAsync of a cudaMallocAsync\n"
        "   block on a stream of its own. Host time of each call:\n\n",
        busy_ms, tutorial::format_bytes(bytes).c_str());
    const FreeCost c = time_frees(bytes, busy_ms);
    tutorial::Table table({{"call"}, {"returned after, ms", tutorial::Align::right}});
    table.add_row({"cudaFree(p)", format("%.3f", c.free_ms)});
    table.add_row({"cudaFreeAsync(p, stream)", format("%.3f", c.free_async_ms)});
    table.print();

    const Reuse r = reuse_on_one_stream(bytes);
    std::printf(
        "\n2. On one stream, no synchronization between the calls: cudaMallocAsync -> %p,\n"
        "   fill, cudaFreeAsync, cudaMallocAsync -> %p (%s), fill with new values:\n"
        "   %zu values wrong.\n",
        r.first, r.second, r.first == r.second ? "the same block" : "another block", r.wrong);

    const std::size_t stale = copy_from_other_stream(bytes, false);
    const std::size_t wrong = copy_from_other_stream(bytes, true);
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::printf(
        "\n3. Stream A allocates a block and, after 50 ms of other work, writes new values;\n"
        "   stream B copies the block out:\n"
        "   without an event: %zu of %zu values copied were not the new ones\n"
        "   with cudaEventRecord(e, A) + cudaStreamWaitEvent(B, e): %zu of %zu\n\n",
        stale, count, wrong, count);
    std::printf(
        "cudaFree cannot know whether running kernels still use the memory, so it waits for the\n"
        "whole device; cudaFreeAsync is ordered on its stream and returns at once. Within a\n"
        "stream, order is enough to reuse a block; across streams only an event says when.\n\n");
    ctx.claim(tutorial::at_least(
        "cudaFree waits for a kernel on an unrelated stream (cudaFree time / kernel time)",
        c.free_ms / c.busy_ms, 0.5, "x", "the kernel had finished before cudaFree was called"));
    ctx.claim(tutorial::at_least("cudaFreeAsync does not wait (cudaFree time / cudaFreeAsync time)",
                                 c.free_ms / c.free_async_ms, 20.0, "x",
                                 "cudaFreeAsync synchronized with the device"));
    // The Programming Guide's Stream-Ordered Memory Allocator chapter allows the reuse and makes
    // stream order enough to keep it safe; whether the very block comes back is the allocator's
    // choice: reported as observed.
    std::printf("The next allocation on the stream got %s (observed on %s).\n\n",
                r.first == r.second ? "the freed block's address" : "another address",
                tutorial::this_driver().c_str());
    ctx.claim(tutorial::documented(
        "the stream's next allocation after cudaFreeAsync needs no synchronization: in stream "
        "order it sees only its own writes",
        r.wrong == 0,
        format("%s, %zu values wrong", r.first == r.second ? "same address" : "another address",
               r.wrong),
        "the stream's work ran out of order", "Runtime API reference: cudaMallocAsync"));
    ctx.claim(tutorial::documented(
        "another stream sees the block's new contents once an event orders it after the write",
        wrong == 0, format("with the event %zu of %zu values not the new ones", wrong, count),
        "the event did not order the copy", "Runtime API reference: cudaStreamWaitEvent"));
    // What the unordered copy sees depends on which stream wins (the writer is held back 50 ms),
    // so like a timing claim it is not judged under compute-sanitizer, which may serialize them.
    ctx.claim(
        tutorial::observed("...and without the event the copy ran before the write", stale == count,
                           format("without the event %zu of %zu stale", stale, count),
                           "nothing orders the two streams, so which runs first is open"),
        tutorial::why_timing_not_judged());
    return ctx.verdict(r.wrong == 0 && wrong == 0,
                       "the reused block and the event-ordered copy held the values written");
}

TUTORIAL_SECTION(stream_ordered, run_stream_ordered);
