// Checks of section discard: ../discard.cu's moves timed against a plain prefetch of live data
// and of a new allocation (placing pages is not free: on driver 580, placing them on the CPU
// cost about as much as the copy), its partial discard checked (by the cudaMemDiscardBatchAsync
// entry the chunks not discarded keep their data; what the discarded ones read after the
// prefetch is shown, never judged or used), discards the entry forbids tried in a child, and
// the moves counted by the driver. The batch calls need concurrentManagedAccess = 1 on every
// device in the system, not only this one.
#include "05_prefetch_advise/discard.cu"

#include "../helpers/counted.hpp"
#include "../helpers/managed.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

using tutorial::format;

namespace {

// One move of `bytes` to `to`, four ways, each timed with events around the step alone.
struct Move {
    double prefetch_ms = 0;          // live data: every page copied
    double discard_prefetch_ms = 0;  // cudaMemDiscardBatchAsync, then cudaMemPrefetchAsync
    double combined_ms = 0;          // cudaMemDiscardAndPrefetchBatchAsync
    double fresh_ms = 0;             // a new allocation, never written: pages and no data
};

constexpr std::uint32_t cpu_seed = 1, gpu_seed = 2;

// Before each timed step the other side writes the whole buffer, so its pages start there.
void write_on_other_side(std::uint32_t* data, std::size_t bytes, bool to_gpu, cudaStream_t s) {
    if (to_gpu) {
        CUDA_CHECK(cudaStreamSynchronize(s));
        fill_on_host(data, bytes / 4, cpu_seed);
    } else {
        fill_on_device_async(data, bytes / 4, gpu_seed, s);
    }
}

Move time_move(std::uint32_t* data, std::size_t bytes, cudaMemLocation to, cudaStream_t stream,
               int runs) {
    const bool to_gpu = to.type == cudaMemLocationTypeDevice;
    tutorial::EventTimer timer(stream);
    std::vector<double> t[4];
    for (int run = 0; run <= runs; ++run) {  // run 0 is the warm-up
        for (int way = 0; way < 4; ++way) {
            void* fresh = nullptr;
            if (way < 3) write_on_other_side(data, bytes, to_gpu, stream);
            if (way == 3) CUDA_CHECK(cudaMallocManaged(&fresh, bytes));
            timer.start();
            if (way == 0) CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, to, 0, stream));
            if (way == 1) discard_then_prefetch(data, bytes, to, stream);
            if (way == 2) discard_and_prefetch(data, bytes, to, stream);
            if (way == 3) CUDA_CHECK(cudaMemPrefetchAsync(fresh, bytes, to, 0, stream));
            timer.stop();
            if (run > 0) t[way].push_back(timer.elapsed_ms());
            if (way == 3) CUDA_CHECK(cudaFree(fresh));
        }
    }
    return {tutorial::median(t[0]), tutorial::median(t[1]), tutorial::median(t[2]),
            tutorial::median(t[3])};
}

// What every other chunk held after it was discarded and the buffer prefetched to the CPU.
struct Partial {
    std::size_t kept = 0, kept_wrong = 0;  // kept chunks: values not as the kernel wrote them
    std::size_t discarded = 0;  // discarded values that read as the kernel wrote them, as the
    std::size_t as_written = 0, older = 0, zero = 0;  // CPU last wrote them, or as 0
};

Partial discard_half(std::uint32_t* data, std::size_t bytes, cudaStream_t stream) {
    constexpr std::uint32_t seed = 45;  // new data, so that old contents cannot pass for it
    discard_every_other_chunk(data, bytes, seed, stream);
    Partial p;
    for (std::size_t i = 0; i < bytes / 4; ++i) {
        const bool discarded = (i * 4 / chunk) % 2 == 1;
        const bool as_written = data[i] == pattern(i, seed);
        (discarded ? p.discarded : p.kept) += 1;
        if (!discarded) p.kept_wrong += !as_written;
        if (discarded) p.as_written += as_written;
        if (discarded) p.older += data[i] == pattern(i, cpu_seed);
        if (discarded) p.zero += data[i] == 0;
    }
    return p;
}

}  // namespace

// Child role: discards of ranges that are not whole pages (the entry does not say how those are
// treated: each row says how many values inside and beside the range lost their data), and
// discards the entry forbids (flags not 0, the legacy stream, memory that is not managed), for
// which it names no error. Exit code 0 when nothing was lost beside a range and every forbidden
// discard was refused; else 10 plus 1 for data lost beside a range, plus 2 for a forbidden
// discard accepted (a failed CUDA_CHECK exits with 1).
int child_discard_misuse(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const std::size_t bytes = 4 * chunk;
    char* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    void* device_memory = nullptr;
    CUDA_CHECK(cudaMalloc(&device_memory, chunk));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    auto* values = reinterpret_cast<std::uint32_t*>(data);
    std::uint32_t seed = 100;
    std::size_t lost_beside = 0;
    int forbidden_accepted = 0;
    const auto show = [&](const char* what, void* at, std::size_t size, unsigned long long flags,
                          cudaStream_t on, bool forbidden) {
        fill_on_device_async(values, bytes / 4, ++seed, stream);  // pages on the GPU
        CUDA_CHECK(cudaStreamSynchronize(stream));
        void* ranges[] = {at};
        std::size_t sizes[] = {size};
        const cudaError_t err = cudaMemDiscardBatchAsync(ranges, sizes, 1, flags, on);
        (void)cudaGetLastError();
        forbidden_accepted += forbidden && err == cudaSuccess;
        CUDA_CHECK(cudaDeviceSynchronize());  // `on` may not be `stream`
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, host_location(), 0, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const std::size_t first = static_cast<char*>(at) - data, last = first + size;
        std::size_t inside = 0, beside = 0;  // values no longer as written
        for (std::size_t i = 0; i < bytes / 4; ++i) {
            const bool in_range = i * 4 + 4 > first && i * 4 < last;
            (in_range ? inside : beside) += values[i] != pattern(i, seed);
        }
        lost_beside += beside;
        std::printf("%-34s -> %-26s lost: %7zu inside, %7zu beside\n", what, cudaGetErrorName(err),
                    inside, beside);
    };
    show("4 KiB at byte 1", data + 1, 4096, 0, stream, false);
    show("1000 bytes at byte 0", data, 1000, 0, stream, false);
    show("4 KiB at 4 KiB", data + 4096, 4096, 0, stream, false);
    show("64 KiB at 64 KiB", data + (64 << 10), 64 << 10, 0, stream, false);
    show("2 MiB at 64 KiB", data + (64 << 10), chunk, 0, stream, false);
    show("2 MiB at 2 MiB (whole pages)", data + chunk, chunk, 0, stream, false);
    show("2 MiB at 2 MiB, flags = 1", data + chunk, chunk, 1, stream, true);
    show("2 MiB at 2 MiB, legacy stream 0", data + chunk, chunk, 0, nullptr, true);
    show("6 MiB at 4 MiB (past the end)", data + 2 * chunk, 3 * chunk, 0, stream, true);
    {
        void* ranges[] = {device_memory};
        std::size_t sizes[] = {chunk};
        const cudaError_t err = cudaMemDiscardBatchAsync(ranges, sizes, 1, 0, stream);
        (void)cudaGetLastError();
        forbidden_accepted += err == cudaSuccess;
        std::printf("%-34s -> %s\n", "2 MiB of cudaMalloc memory", cudaGetErrorName(err));
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(device_memory));
    CUDA_CHECK(cudaFree(data));
    const int bits = (lost_beside == 0 ? 0 : 1) + (forbidden_accepted == 0 ? 0 : 2);
    return bits == 0 ? 0 : 10 + bits;
}

namespace {

void print_moves(const Move& to_cpu, const Move& to_gpu, std::size_t bytes) {
    tutorial::Table table({{"step"},
                           {"GPU -> CPU ms", tutorial::Align::right},
                           {"GB/s", tutorial::Align::right},
                           {"CPU -> GPU ms", tutorial::Align::right},
                           {"GB/s", tutorial::Align::right}});
    const auto row = [&](const char* step, double Move::*ms) {
        table.add_row({step, format("%.2f", to_cpu.*ms),
                       format("%.1f", tutorial::gb_per_s(bytes, to_cpu.*ms)),
                       format("%.2f", to_gpu.*ms),
                       format("%.1f", tutorial::gb_per_s(bytes, to_gpu.*ms))});
    };
    row("cudaMemPrefetchAsync (live data)", &Move::prefetch_ms);
    row("cudaMemDiscardBatchAsync + the prefetch", &Move::discard_prefetch_ms);
    row("cudaMemDiscardAndPrefetchBatchAsync", &Move::combined_ms);
    row("prefetch of a new allocation (no data)", &Move::fresh_ms);
    table.print();
}

// The section's claims: the timing, the kept chunks, and the child's two observations (its exit
// code: 0, or 10 plus 1 for data lost beside a range and plus 2 for a forbidden discard accepted).
void claim_lessons(tutorial::Context& ctx, const Move& to_gpu, const Partial& p,
                   const tutorial::ChildResult& misuse) {
    ctx.claim(tutorial::at_least(
        "to the GPU, discarding first makes the move much cheaper (prefetch / "
        "discard-and-prefetch)",
        to_gpu.prefetch_ms / to_gpu.combined_ms, 1.5, "x", "the driver copied discarded pages"));
    // The entry: the discard applies to the ranges it is given; the others keep their contents.
    ctx.claim(tutorial::documented("a discard leaves the ranges it was not given intact",
                                   p.kept_wrong == 0,
                                   format("%zu of %zu kept values wrong", p.kept_wrong, p.kept),
                                   "the discard reached past the ranges it was given",
                                   "Runtime API reference: cudaMemDiscardBatchAsync"));
    const int code = misuse.exited ? misuse.exit_code : -1;
    const bool ran = code == 0 || (code >= 11 && code <= 13);
    const bool lost_beside = !ran || (code != 0 && ((code - 10) & 1) != 0);
    const bool accepted = !ran || (code != 0 && ((code - 10) & 2) != 0);
    ctx.claim(tutorial::observed(
        "a discard that is not page aligned loses nothing beside its range", !lost_beside,
        !ran          ? "the child " + misuse.describe()
        : lost_beside ? "values beside a range were lost (the rows say where)"
                      : "no value beside any range lost",
        "the cudaMemDiscardBatchAsync entry does not say how a range that is not whole pages is "
        "treated (the prefetch and advice entries round theirs out to whole CPU pages)"));
    ctx.claim(tutorial::observed(
        "each discard the entry forbids is refused: flags not 0, the legacy stream, a range past "
        "the allocation, cudaMalloc memory",
        !accepted,
        !ran       ? "the child " + misuse.describe()
        : accepted ? "a forbidden discard was accepted (the rows say which)"
                   : "all 4 refused",
        "the cudaMemDiscardBatchAsync entry says flags must be 0, the stream must not be the "
        "legacy one and the ranges must be managed memory, but names no error for breaking "
        "these"));
}

// The moves once more, on a buffer of at most 64 MiB, with the driver's Unified Memory counters
// on: the bytes each way of moving took across the link.
struct Counted {
    tutorial::UmTraffic live_to_gpu, discard_then_prefetch, combined;
};

Counted count_moves(tutorial::UmCounters& counters, std::size_t bytes, int device) {
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const cudaMemLocation gpu = gpu_location(device);
    const cudaMemLocation host = host_location();
    const auto written_on = [&](bool cpu) {  // uncounted: finished before the step starts
        write_on_other_side(data, bytes, cpu, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
    };
    CountedSteps steps(counters);
    Counted c;
    written_on(true);
    c.live_to_gpu = steps.step("to the GPU: cudaMemPrefetchAsync (live data)", [&] {
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, stream));
    });
    written_on(true);
    c.discard_then_prefetch = steps.step("to the GPU: cudaMemDiscardBatchAsync + the prefetch",
                                         [&] { discard_then_prefetch(data, bytes, gpu, stream); });
    written_on(true);
    c.combined = steps.step("to the GPU: cudaMemDiscardAndPrefetchBatchAsync",
                            [&] { discard_and_prefetch(data, bytes, gpu, stream); });
    written_on(false);
    steps.step("to the CPU: cudaMemPrefetchAsync (live data)",
               [&] { CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, host, 0, stream)); });
    written_on(false);
    steps.step("to the CPU: cudaMemDiscardAndPrefetchBatchAsync",
               [&] { discard_and_prefetch(data, bytes, host, stream); });
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(data));
    steps.print("What the driver moved in each step, " + tutorial::format_bytes(bytes) +
                " (its Unified Memory counters):");
    return c;
}

// The counted claims: a live prefetch copies the buffer, one after a discard does not.
void claim_counted(tutorial::Context& ctx, const tutorial::UmCounters& counters, const Counted& c,
                   std::size_t bytes) {
    std::printf(
        "\nTo the GPU, the discarded pages are placed without their data. The rows to the CPU\n"
        "show what this driver moved there after a discard; they are not judged: the entry\n"
        "only says that a discard lets the driver optimize the move, not how.\n\n");
    ctx.claim(tutorial::counted_at_least(
                  "a prefetch of live data to the GPU copies it (MiB host to device, % of the "
                  "buffer)",
                  percent_of(c.live_to_gpu.htod.total, bytes), 90.0, "%",
                  "the pages were on the GPU already"),
              why_not_counted(counters, {&c.live_to_gpu}));
    const std::uint64_t after_discard =
        std::max(c.discard_then_prefetch.htod.total, c.combined.htod.total);
    ctx.claim(tutorial::counted_at_most(
                  "after a discard, the prefetch to the GPU copies at most half of it, either way "
                  "it is asked (MiB host to device, the larger of the two, % of the buffer)",
                  percent_of(after_discard, bytes), 50.0, "%",
                  "the driver copied the discarded pages' data all the same"),
              why_not_counted(counters, {&c.discard_then_prefetch, &c.combined}));
}

}  // namespace

tutorial::Result run_discard(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    if (const std::string why = why_no_batch_calls(); !why.empty()) return ctx.skip(why);
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (256 << 20) : (1 << 30));
    const int runs = ctx.iters_or(ctx.quick() ? 3 : 5);
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const Move to_cpu = time_move(data, bytes, host_location(), stream, runs);
    const Move to_gpu = time_move(data, bytes, gpu_location(ctx.device), stream, runs);
    const Partial p = discard_half(data, bytes, stream);
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(data));
    std::printf(
        "A managed buffer of %s, written on one side and then moved to the other. Events\n"
        "around the move alone, median of %d after 1 warm-up:\n\n",
        tutorial::format_bytes(bytes).c_str(), runs);
    print_moves(to_cpu, to_gpu, bytes);
    std::printf(
        "\nEvery other 2 MiB chunk written by a kernel, discarded in one batch (%zu ranges), and\n"
        "the whole buffer prefetched to the CPU and read there:\n"
        "  kept chunks:      %zu of %zu values not as the kernel wrote them\n"
        "  discarded chunks: %zu of %zu values as the kernel wrote them, %zu as the CPU last\n"
        "                    wrote them (before the kernel), %zu zero (observed on %s)\n"
        "The cudaMemDiscardBatchAsync entry: the prefetch undid the discard, but what the\n"
        "discarded chunks then hold, it does not say (without the prefetch or a write, a read\n"
        "would return indeterminate values). So they are shown, never judged or used.\n\n",
        bytes / chunk / 2, p.kept_wrong, p.kept, p.as_written, p.discarded, p.older, p.zero,
        tutorial::this_driver().c_str());
    const tutorial::ChildResult misuse =
        tutorial::run_child("discard_misuse", {std::to_string(ctx.device)});
    std::printf(
        "In a child, 8 MiB written by the GPU, one range discarded, and the whole of it\n"
        "prefetched to the CPU and compared, row by row (the entry names no error code: the\n"
        "codes are this driver's):\n");
    tutorial::print_child_output(misuse);
    std::printf("The child %s.\n\n", misuse.describe().c_str());
    claim_lessons(ctx, to_gpu, p, misuse);
    // What moved, counted by the driver once the timings are done, so that recording cannot slow
    // them.
    {
        tutorial::UmCounters counters;
        const std::size_t counted = counted_bytes(bytes);
        claim_counted(ctx, counters, count_moves(counters, counted, ctx.device), counted);
    }
    return ctx.verdict(p.kept_wrong == 0,
                       "the chunks not discarded arrived on the CPU as the kernel wrote them");
}

TUTORIAL_SECTION(discard, run_discard);
TUTORIAL_CHILD(discard_misuse, child_discard_misuse);
