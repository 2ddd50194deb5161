// Checks of section master_workers: runs the batch of ../master_workers.cu with N worker
// processes (helpers/slice_workers.cu starts them, one task line each, and checks each worker's sum
// and slice of the result), prints where each worker saw the buffers, and states the lesson as
// claims. The role `slice_worker` is the worker's side; robustness starts it too, and has one
// crash.
#include "07_ipc/master_workers.cu"

#include "../helpers/channel.hpp"
#include "../helpers/ipc_common.hpp"
#include "../helpers/slice_workers.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>

using tutorial::Align;
using tutorial::format;

namespace {

constexpr std::uint32_t batch_seed = 41;
// Where sharing a cudaMalloc buffer this way is documented: the Guide's Interprocess
// Communication section, in which cudaIpcOpenMemHandle turns the handle from cudaIpcGetMemHandle
// into a pointer that is valid in the other process.
const tutorial::Entry guide_ipc{"Programming Guide, Interprocess Communication",
                                "cudaIpcGetMemHandle cudaIpcOpenMemHandle", "can"};
const tutorial::Entry valid_pointer{"Programming Guide, Interprocess Communication",
                                    "cudaIpcOpenMemHandle", "is"};

// The master's own addresses of the two buffers, and what each worker did.
struct BatchRun {
    std::uintptr_t input;
    std::uintptr_t result;
    std::vector<WorkerOutcome> workers;
};

// The lesson's batch, from the master's side: the buffers on the GPU, one task line per worker,
// the workers started (fork + exec), sent their lines and waited for (helpers/slice_workers.cu),
// and the buffers freed once every worker has ended.
BatchRun run_batch(int device, std::size_t count, int workers, std::uint32_t seed) {
    const Batch batch = put_batch_on_gpu(count, seed);
    const std::vector<std::string> lines = task_lines(batch, count, workers);
    std::vector<Slice> slices;
    for (const std::string& line : lines) {
        SliceTask task{};
        parse_task_line(line, &task);  // the slice each worker will read, for the checks
        slices.push_back({task.offset, task.count});
    }
    BatchRun run{reinterpret_cast<std::uintptr_t>(batch.input),
                 reinterpret_cast<std::uintptr_t>(batch.result),
                 run_slice_workers(device, lines, slices, -1, seed, batch.result)};
    free_batch(batch);
    return run;
}

}  // namespace

// Child role `slice_worker` (args: device, "work" or "crash"): reads its task line on stdin and
// works on its slice; answers the sum over its channel. A "crash" worker opens the master's input
// and crashes while it holds the handle.
int child_slice_worker(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    std::string line;
    SliceTask task{};
    const tutorial::Input got = tutorial::read_input_line(line, task_timeout_s);
    if (got == tutorial::Input::timed_out) {
        std::printf("no task within %.0f s, though the channel is open: giving up\n",
                    task_timeout_s);
        return 5;
    }
    if (got == tutorial::Input::closed || !parse_task_line(line, &task)) {
        std::printf("the channel closed before a task arrived: exiting\n");
        return 4;
    }
    if (args.at(1) == "crash") {
        void* input = nullptr;
        CUDA_CHECK(cudaIpcOpenMemHandle(&input, task.input, cudaIpcMemLazyEnablePeerAccess));
        std::printf("input at %p; slice %zu + %zu\n", input, task.offset, task.count);
        std::printf("crashing on purpose, in the middle of the task\n");
        std::fflush(stdout);
        std::raise(SIGSEGV);
    }
    const SliceWork work = work_on_slice(task);
    std::printf("input at %p, result at %p; slice %zu + %zu\n", work.input, work.result,
                task.offset, task.count);
    // The answer goes over the channel, the master's one way of hearing from its workers.
    send_line(tutorial::child_passed_fd,
              format("checksum %llu", static_cast<unsigned long long>(work.checksum)));
    return 0;
}

tutorial::Result run_master_workers(tutorial::Context& ctx) {
    if (const std::string why = why_no_legacy_ipc(ctx.device); !why.empty()) return ctx.skip(why);
    const std::size_t count = ctx.size_or(ctx.quick() ? (4 << 20) : (256 << 20)) / 4;
    // Each worker holds a context of its own, the master the two buffers: as many workers as the
    // free memory holds, asked for or not.
    const WorkerMemory need{0, 0, 2 * count * 4, 0};
    const int wanted = ctx.workers_or(ctx.quick() ? 2 : 4);
    const int workers = workers_fitting(wanted, need);
    if (workers < 1) return ctx.skip(workers_note(wanted, workers, need));
    if (workers < wanted) std::printf("%s: running %d.\n\n", workers_note(wanted, workers, need).c_str(), workers);
    std::printf(
        "The master fills %s on the device and starts %d workers (fork + exec of this program).\n"
        "Each gets, on its stdin, the IPC handles of the input and result buffers and its slice\n"
        "as an offset and a count; it sums its slice, writes 2 * x + 1 into the result buffer,\n"
        "closes the handles and reports the sum.\n\n",
        tutorial::format_bytes(count * 4).c_str(), workers);
    const BatchRun batch = run_batch(ctx.device, count, workers, batch_seed);

    std::printf("master: input at 0x%zx, result at 0x%zx\n", static_cast<std::size_t>(batch.input),
                static_cast<std::size_t>(batch.result));
    tutorial::Table table({{"worker"},
                           {"slice", Align::right},
                           {"addresses in the worker"},
                           {"ended"},
                           {"sum"},
                           {"results"}});
    int good = 0, read_ok = 0, wrote_ok = 0;
    for (std::size_t w = 0; w < batch.workers.size(); ++w) {
        const WorkerOutcome& o = batch.workers[w];
        good += o.child.succeeded() && o.checksum_ok && o.results_ok;
        read_ok += o.checksum_ok;
        wrote_ok += o.results_ok;
        table.add_row({format("%zu", w), format("%zu + %zu", o.offset, o.count), o.mapped,
                       o.child.describe(), o.checksum_ok ? "correct" : "WRONG",
                       o.results_ok ? "correct" : "WRONG"});
    }
    table.print();
    std::printf(
        "\nThe same memory appears at a different address in each process, which is why the\n"
        "slices travel as offsets: a pointer from the master would mean nothing in a worker.\n\n");
    ctx.claim(tutorial::documented(
        "reads_in_place", "through an IPC handle, a worker reads the master's device memory in place",
        read_ok == workers, format("%d of %d workers' sums correct", read_ok, workers),
        "a worker could not open the handle; its line in the table says how it ended",
        guide_ipc));
    ctx.claim(tutorial::documented(
        "writes_reach_master", "what workers write through their handles is in the master's buffer, with no copy",
        wrote_ok == workers, format("%d of %d slices correct in the master", wrote_ok, workers),
        "a worker closed its handle before its kernel had finished", valid_pointer));
    return ctx.verdict(good == workers,
                       format("%d of %d workers reported the right sum for their slice and wrote "
                              "the right results into the shared buffer",
                              good, workers));
}

TUTORIAL_SECTION(master_workers, run_master_workers);
TUTORIAL_CHILD(slice_worker, child_slice_worker);
