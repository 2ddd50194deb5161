// Checks of section bench: runs the walkthrough of ../bench.cu with K workers each way (this
// program in the child roles `ipc_worker` and `copy_worker`, the lesson's two workers), sets the
// times side by side and checks every worker's sum; each timing claim is measured again with fresh
// workers when it falls short.
#include "07_ipc/bench.cu"

#include "../helpers/ipc_common.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

using tutorial::format;
using tutorial::median;

// Child roles (args: device): the lesson's two workers.
int child_ipc_worker(const std::vector<std::string>& args) {
    return ipc_worker(std::atoi(args.at(0).c_str()));
}

int child_copy_worker(const std::vector<std::string>& args) {
    return copy_worker(std::atoi(args.at(0).c_str()));
}

namespace {

// The workers' numbers, one per worker that answered.
std::vector<double> of(const Found& f, double IpcAnswer::*field) {
    std::vector<double> values;
    for (const IpcAnswer& a : f.ipc) values.push_back(a.*field);
    return values;
}

std::vector<double> arrivals(const Found& f) {
    std::vector<double> values;
    for (const CopyAnswer& c : f.copies) values.push_back(c.arrive_ms);
    return values;
}

// What the claims compare: a worker's wait for its copy against a worker's first open, and the
// fastest worker's read in place against the master's. Workers read at about the same moment, and
// a context waiting for the GPU while another one's kernel runs reads slower for it: the fastest
// is the one that had the GPU to itself.
double copy_over_open(const Found& f) {
    return median(arrivals(f)) / median(of(f, &IpcAnswer::first_open_ms));
}

double fastest_over_master(const Found& f) {
    const std::vector<double> reads = of(f, &IpcAnswer::read_gbps);
    return reads.empty() ? 0.0 : *std::max_element(reads.begin(), reads.end()) / f.own_gbps;
}

void print_found(const Found& f, int workers) {
    tutorial::Table table({{"measure"}, {"value", tutorial::Align::right}});
    table.add_row(
        {format("all %d workers done, IPC (ms, wall)", workers), format("%.1f", f.ipc_wall_ms)});
    table.add_row({format("all %d workers done, pipe + upload (ms, wall)", workers),
                   format("%.1f", f.copy_wall_ms)});
    table.add_row({"cudaIpcOpenMemHandle, a worker's first open, median (ms)",
                   format("%.3f", median(of(f, &IpcAnswer::first_open_ms)))});
    table.add_row({"cudaIpcOpenMemHandle, opening again in the same worker, median (ms)",
                   format("%.3f", median(of(f, &IpcAnswer::reopen_ms)))});
    table.add_row({"a pipe worker receiving + uploading the data, median (ms)",
                   format("%.3f", median(arrivals(f)))});
    table.add_row({"cudaIpcCloseMemHandle, median (ms)",
                   format("%.3f", median(of(f, &IpcAnswer::close_ms)))});
    table.add_row({"a worker reading the opened memory, median (GB/s)",
                   format("%.0f", median(of(f, &IpcAnswer::read_gbps)))});
    table.add_row({"the master reading its own memory (GB/s)", format("%.0f", f.own_gbps)});
    table.print();
}

// Sums right (IPC workers, copying workers, the master), and workers that exited cleanly.
int right_sums(const Found& f, std::uint64_t expected) {
    int right = f.own_sum == expected;
    for (const IpcAnswer& a : f.ipc) right += a.sum == expected;
    for (const CopyAnswer& c : f.copies) right += c.sum == expected;
    return right;
}

}  // namespace

tutorial::Result run_bench(tutorial::Context& ctx) {
    if (const std::string why = why_no_legacy_ipc(ctx.device); !why.empty()) return ctx.skip(why);
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (64 << 20) : (256 << 20));
    // Each copying worker holds a context and a copy of the data in device and in pinned host
    // memory, the master the data and its pinned copy: as many workers as the memory holds.
    const WorkerMemory need{bytes, bytes, bytes, bytes};
    const int wanted = ctx.workers_or(ctx.quick() ? 2 : 4);
    const int workers = workers_fitting(wanted, need);
    if (workers < 1) return ctx.skip(workers_note(wanted, workers, need));
    if (workers < wanted) {
        std::printf("%s: running %d.\n\n", workers_note(wanted, workers, need).c_str(), workers);
    }
    std::printf("%s of data on the GPU, wanted by %d worker processes, each way.\n\n",
                tutorial::format_bytes(bytes).c_str(), workers);
    const std::vector<std::string> self = {"/proc/self/exe", tutorial::child_flag};
    const Found f = walkthrough(bytes, workers, ctx.device, self);
    print_found(f, workers);
    int clean = 0;
    for (const int status : f.statuses) clean += child_result(status).succeeded();
    std::printf(
        "\nBoth wall times include starting the worker processes and their CUDA contexts. IPC\n"
        "moves no data at all: each worker reads the master's memory at device speed. The copy\n"
        "moves every byte through the CPU once per worker and then over the host link again.\n\n");
    // Below 64 MiB the copy's time is too close to an open's (at 16 MiB: 11 ms against up to
    // 1.9 ms) and a read is mostly its launch, so neither ratio says anything.
    const std::string small = tutorial::why_too_small(
        bytes, std::size_t{64} << 20,
        "the data is too small for its transfer to outweigh an open, or a read its launch");
    // With many workers their first opens and their uploads run at once and wait on one another:
    // the ratio then measures the crowd (16 workers on the H200, 2026-12-02: 3.0x to 4.2x, where
    // 2 and 4 workers measured far above 5x).
    std::string crowded = small;
    if (crowded.empty() && workers > 4) {
        crowded = format("%d workers open and upload at once, waiting on one another: a first "
                       "open measures the crowd, not IPC (judged with 4 workers or fewer)",
                       workers);
    }
    const auto again = [&](double (*ratio)(const Found&)) {
        return ratio(walkthrough(bytes, workers, ctx.device, self));
    };
    ctx.claim(tutorial::at_least("ipc_sooner_than_pipe",
                                 "a worker's first IPC open gets it the data sooner than a pipe "
                                 "and an upload (pipe / first-open time)",
                                 copy_over_open(f), 5.0, "x",
                                 "the data was too small for the pipe to cost much (try a "
                                 "larger --size)")
                  .again([&] { return again(copy_over_open); }),
              crowded);
    // At device speed, not the link's: the link would give a few percent of the master's speed.
    ctx.claim(tutorial::at_least("worker_reads_at_device_speed",
                                 "a worker reads the opened memory at device speed, like the "
                                 "master (fastest worker GB/s / master GB/s)",
                                 fastest_over_master(f), 0.5, "x",
                                 "the opened memory is reached over a slower path: another GPU "
                                 "through peer access, or over the host link")
                  .again([&] { return again(fastest_over_master); }),
              small);
    const int sums = right_sums(f, pattern_sum(bytes / 4, bench_seed));
    return ctx.verdict(sums == 2 * workers + 1 && clean == 2 * workers,
                       format("%d of %d sums (IPC workers, pipe workers, master) equal the "
                              "data's; %d of %d workers exited cleanly",
                              sums, 2 * workers + 1, clean, 2 * workers));
}

TUTORIAL_SECTION(bench, run_bench);
TUTORIAL_CHILD(ipc_worker, child_ipc_worker);
TUTORIAL_CHILD(copy_worker, child_copy_worker);
