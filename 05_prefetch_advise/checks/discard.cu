// Checks of section discard: runs ../discard.cu's walkthrough round after round and times each
// move (events on its stream) against a plain prefetch of live data and of a new allocation
// (placing pages is not free), shows what its partial discard kept (by the
// cudaMemDiscardBatchAsync entry the chunks not discarded keep their data; what the discarded
// ones read after the prefetch is shown, never judged), tries discards the entry forbids in a
// child, and counts the moves with the driver's Unified Memory counters. The batch calls need
// concurrentManagedAccess = 1 on every device in the system, not only this one.
#include "05_prefetch_advise/discard.cu"

#include "../helpers/counted.hpp"
#include "../helpers/managed.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/text.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

using tutorial::format;

namespace {

// The lesson's moves, moves[to the GPU, to the CPU][way], and each way's name in the table.
constexpr int ways = 4;
const char* const way_names[ways] = {"cudaMemPrefetchAsync (live data)",
                                     "cudaMemDiscardBatchAsync + the prefetch",
                                     "cudaMemDiscardAndPrefetchBatchAsync",
                                     "prefetch of a new allocation (no data)"};

// Each move's median over the rounds, by the events of the walkthrough's stream:
// [to the GPU, to the CPU][way].
struct Moves {
    double ms[2][ways] = {};
};

Moves time_rounds(std::size_t bytes, int device, int runs, Partial& p) {
    tutorial::StepTimes times;
    for (int r = 0; r < runs; ++r) {
        const Partial found = walkthrough(bytes, device);
        p.kept_wrong += found.kept_wrong;
        p.kept = found.kept;
        p.discarded = found.discarded;
        p.discarded_as_written = found.discarded_as_written;
    }
    Moves m;
    for (int side = 0; side < 2; ++side) {
        for (int way = 0; way < ways; ++way) m.ms[side][way] = times.median_ms(moves[side][way]);
    }
    return m;
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

void print_moves(const Moves& m, std::size_t bytes) {
    tutorial::Table table({{"step"},
                           {"GPU -> CPU ms", tutorial::Align::right},
                           {"GB/s", tutorial::Align::right},
                           {"CPU -> GPU ms", tutorial::Align::right},
                           {"GB/s", tutorial::Align::right}});
    for (int way = 0; way < ways; ++way) {
        table.add_row({way_names[way], format("%.2f", m.ms[1][way]),
                       format("%.1f", tutorial::gb_per_s(bytes, m.ms[1][way])),
                       format("%.2f", m.ms[0][way]),
                       format("%.1f", tutorial::gb_per_s(bytes, m.ms[0][way]))});
    }
    table.print();
}

// The section's claims but the counted ones: the timing, the kept chunks, and the child's two
// observations (its exit code: 0, or 10 plus 1 for data lost beside a range and plus 2 for a
// forbidden discard accepted).
void claim_lessons(tutorial::Context& ctx, const Moves& m, const Partial& p,
                   const tutorial::ChildResult& misuse, std::size_t bytes,
                   const std::function<Moves()>& again) {
    ctx.claim(tutorial::at_least("discard_makes_move_cheaper",
                                 "to the GPU, discarding first makes the move much cheaper "
                                 "(prefetch / discard-and-prefetch)",
                                 m.ms[0][0] / m.ms[0][2], 1.5, "x",
                                 "the driver copied discarded pages")
                  .again([&] {
                      const Moves n = again();
                      return n.ms[0][0] / n.ms[0][2];
                  }),
              tutorial::why_too_small(bytes, std::size_t{256} << 20,
                                      "the calls' fixed costs hide the copy a discard saves"));
    // The cudaMemDiscardBatchAsync entry: it performs the discard on the address ranges given in
    // dptrs and sizes (whose contents are then no longer useful), not on others.
    ctx.claim(tutorial::documented(
        "others_keep_data", "a discard leaves the ranges it was not given intact",
        p.kept_wrong == 0, format("%zu of %zu kept values wrong", p.kept_wrong, p.kept),
        "the discard reached past the ranges it was given",
        tutorial::Entry{"Runtime API reference: cudaMemDiscardBatchAsync",
                        "address ranges dptrs sizes", "performs"}));
    const int code = misuse.exited ? misuse.exit_code : -1;
    const bool ran = code == 0 || (code >= 11 && code <= 13);
    const bool lost_beside = !ran || (code != 0 && ((code - 10) & 1) != 0);
    const bool accepted = !ran || (code != 0 && ((code - 10) & 2) != 0);
    ctx.claim(tutorial::observed(
        "unaligned_loses_nothing_beside",
        "a discard that is not page aligned loses nothing beside its range", !lost_beside,
        !ran          ? "the child " + misuse.describe()
        : lost_beside ? "values beside a range were lost (the rows say where)"
                      : "no value beside any range lost",
        "the cudaMemDiscardBatchAsync entry does not say how a range that is not whole pages is "
        "treated (the prefetch and advice entries round theirs out to whole CPU pages)"));
    ctx.claim(tutorial::observed(
        "forbidden_refused",
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

// The counted claims: a live prefetch copies the buffer, one after a discard does not.
void claim_counted(tutorial::Context& ctx, const tutorial::UmCounters& counters,
                   const tutorial::StepTraffic& traffic, std::size_t bytes) {
    const tutorial::UmTraffic& live = traffic.of(moves[0][0]);
    const tutorial::UmTraffic& two_calls = traffic.of(moves[0][1]);
    const tutorial::UmTraffic& one_call = traffic.of(moves[0][2]);
    std::printf(
        "\nTo the GPU, the discarded pages are placed without their data. The rows to the CPU\n"
        "show what this driver moved there after a discard; they are not judged: the entry\n"
        "only says that a discard lets the driver optimize the move, not how.\n\n");
    ctx.claim(tutorial::counted_at_least(
                  "live_prefetch_copies",
                  "a prefetch of live data to the GPU copies it (MiB host to device, % of the "
                  "buffer)",
                  percent_of(live.htod.total, bytes), 90.0, "%",
                  "the pages were on the GPU already"),
              why_not_counted(counters, {&live}));
    const std::uint64_t after_discard = std::max(two_calls.htod.total, one_call.htod.total);
    ctx.claim(tutorial::counted_at_most(
                  "discarded_not_copied",
                  "after a discard, neither way of prefetching copies over half (MiB host to "
                  "device, % of the buffer)",
                  percent_of(after_discard, bytes), 50.0, "%",
                  "the driver copied the discarded pages' data all the same"),
              why_not_counted(counters, {&two_calls, &one_call}));
}

}  // namespace

tutorial::Result run_discard(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    if (const std::string why = why_no_batch_calls(); !why.empty()) return ctx.skip(why);
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (256 << 20) : (1 << 30));
    const int runs = ctx.iters_or(ctx.quick() ? 3 : 5);
    std::printf(
        "A managed buffer of %s, written on one side and then moved to the other, four ways;\n"
        "events around each move alone, medians of %d walkthroughs after a small one:\n\n",
        tutorial::format_bytes(bytes).c_str(), runs);
    Partial p;
    p.kept_wrong += walkthrough(std::min(bytes, std::size_t{8} << 20), ctx.device).kept_wrong;
    const Moves m = time_rounds(bytes, ctx.device, runs, p);
    print_moves(m, bytes);
    std::printf(
        "\nEvery other 2 MiB chunk written by a kernel, discarded in one batch (%zu ranges), and\n"
        "the whole buffer prefetched to the CPU and read there:\n"
        "  kept chunks:      %zu of %zu values not as the kernel wrote them\n"
        "  discarded chunks: %zu of %zu values as the kernel wrote them (observed on %s)\n"
        "The cudaMemDiscardBatchAsync entry: the prefetch undid the discard, but what the\n"
        "discarded chunks then hold, it does not say (without the prefetch or a write, a read\n"
        "would return indeterminate values). So they are shown, never judged or used.\n\n",
        bytes / chunk / 2, p.kept_wrong, p.kept, p.discarded_as_written, p.discarded,
        tutorial::this_driver().c_str());
    const tutorial::ChildResult misuse =
        tutorial::run_child("discard_misuse", {std::to_string(ctx.device)});
    std::printf(
        "In a child, 8 MiB written by the GPU, one range discarded, and the whole of it\n"
        "prefetched to the CPU and compared, row by row (the entry names no error code: the\n"
        "codes are this driver's):\n");
    tutorial::print_child_output(misuse);
    std::printf("The child %s.\n\n", misuse.describe().c_str());
    claim_lessons(ctx, m, p, misuse, bytes,
                  [&] { return time_rounds(bytes, ctx.device, runs, p); });
    // What moved, counted by the driver once the timings are done, so that counting cannot slow
    // them; at most 64 MiB, where no record is lost (counted.hpp).
    const std::size_t counted = counted_bytes(bytes);
    {
        tutorial::UmCounters counters;
        tutorial::StepTraffic traffic(counters);
        p.kept_wrong += walkthrough(counted, ctx.device).kept_wrong;
        print_traffic(counters, traffic, tutorial::format_bytes(counted));
        claim_counted(ctx, counters, traffic, counted);
    }
    return ctx.verdict(p.kept_wrong == 0,
                       "the chunks not discarded arrived on the CPU as the kernel wrote them, in "
                       "every walkthrough");
}

TUTORIAL_SECTION(discard, run_discard);
TUTORIAL_CHILD(discard_misuse, child_discard_misuse);
