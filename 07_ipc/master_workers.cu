// Section `master_workers`: the scenario of the CUDA Programming Guide's interprocess
// communication section. A master process puts a batch of data on the GPU once, and worker
// processes use it in place through IPC handles.
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/harness/report.hpp"
#include "helpers/channel.hpp"
#include "helpers/ipc_common.hpp"
#include "helpers/slice_workers.hpp"
#include "common/harness/chapter.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>

using tutorial::Align;
using tutorial::format;

namespace {

constexpr std::uint32_t batch_seed = 41;
// Where sharing a cudaMalloc buffer this way is documented: the handle maps the master's memory
// into the worker's address space, at an address of the worker's own.
constexpr const char* ipc_entries =
    "Runtime API reference: cudaIpcGetMemHandle, cudaIpcOpenMemHandle; Programming Guide, "
    "Interprocess Communication";

struct BatchOutcome {
    std::uintptr_t input;  // the master's own addresses of the two buffers
    std::uintptr_t result;
    std::vector<WorkerOutcome> workers;
};

// What a worker did with its slice: where the two buffers appeared in its process, and the sum
// of its slice of the input.
struct SliceWork {
    void* input;
    void* result;
    std::uint64_t checksum;
};

// lesson:begin
// The master: the batch goes to the GPU once, and each buffer gets an IPC handle, made once for
// every worker. A worker receives the handles and its slice as an offset and a count.
BatchOutcome master(int device, std::size_t count, int workers) {
    std::uint32_t* input = nullptr;
    std::uint32_t* result = nullptr;
    CUDA_CHECK(cudaMalloc(&input, count * sizeof *input));
    CUDA_CHECK(cudaMalloc(&result, count * sizeof *result));
    fill_on_device(input, count, batch_seed);
    CUDA_CHECK(cudaMemset(result, 0, count * sizeof *result));
    SliceTask task{};
    CUDA_CHECK(cudaIpcGetMemHandle(&task.input, input));
    CUDA_CHECK(cudaIpcGetMemHandle(&task.result, result));
    // Start the workers (fork + exec), send each its task, wait for all, check their slices.
    BatchOutcome batch{reinterpret_cast<std::uintptr_t>(input),
                       reinterpret_cast<std::uintptr_t>(result),
                       run_slice_workers(device, task, count, workers, -1, batch_seed, result)};
    CUDA_CHECK(cudaFree(input));
    CUDA_CHECK(cudaFree(result));
    return batch;
}

// A worker: the handles become addresses of this process; it uses the master's memory in place,
// finishes with it, and lets go of it.
SliceWork work_on_slice(const SliceTask& task) {
    SliceWork work{};
    CUDA_CHECK(cudaIpcOpenMemHandle(&work.input, task.input, cudaIpcMemLazyEnablePeerAccess));
    CUDA_CHECK(cudaIpcOpenMemHandle(&work.result, task.result, cudaIpcMemLazyEnablePeerAccess));
    const auto* in = static_cast<const std::uint32_t*>(work.input) + task.offset;
    auto* out = static_cast<std::uint32_t*>(work.result) + task.offset;
    work.checksum = sum_on_device(in, task.count);
    transform(in, out, task.count, nullptr);  // out[i] = 2 * in[i] + 1
    CUDA_CHECK(cudaDeviceSynchronize());      // done with the memory before letting go of it
    CUDA_CHECK(cudaIpcCloseMemHandle(work.input));
    CUDA_CHECK(cudaIpcCloseMemHandle(work.result));
    return work;
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

}  // namespace

// Child role `slice_worker` (args: device, "work" or "crash", and optionally how many seconds
// to wait for the task): reads its task on stdin and works on its slice; answers the sum over its
// channel. A "crash" worker opens the master's input and crashes while it holds the handle.
int child_slice_worker(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const double timeout_s = args.size() > 2 ? std::atof(args[2].c_str()) : task_timeout_s;
    std::string line;
    SliceTask task{};
    const tutorial::Input got = tutorial::read_input_line(line, timeout_s);
    if (got == tutorial::Input::timed_out) {
        std::printf("no task within %.0f s, though the channel is open: giving up\n", timeout_s);
        return 5;
    }
    if (got == tutorial::Input::closed || !decode(line, task)) {
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
    const std::size_t count = ctx.size_or(ctx.quick() ? (4 << 20) : (256 << 20)) / 4;
    // Each worker holds a context of its own: fewer by default on a small GPU.
    const int workers = ctx.workers_or(workers_that_fit(ctx.quick() ? 2 : 4, 2, 0));
    const std::string no_room = workers_room_problem(workers, 0);
    if (!no_room.empty()) return ctx.skip(no_room);
    std::printf(
        "The master fills %s on the device and starts %d workers (fork + exec of this program).\n"
        "Each gets, on its stdin, the IPC handles of the input and result buffers and its slice\n"
        "as an offset and a count; it sums its slice, writes 2 * x + 1 into the result buffer,\n"
        "closes the handles and reports the sum.\n\n",
        tutorial::format_bytes(count * 4).c_str(), workers);
    const BatchOutcome batch = master(ctx.device, count, workers);

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
        "through an IPC handle, a worker reads the master's device memory in place",
        read_ok == workers, format("%d of %d workers' sums correct", read_ok, workers),
        "a worker could not open the handle; its line in the table says how it ended",
        ipc_entries));
    ctx.claim(tutorial::documented(
        "what workers write through their handles is in the master's buffer, with no copy",
        wrote_ok == workers, format("%d of %d slices correct in the master", wrote_ok, workers),
        "a worker closed its handle before its kernel had finished", ipc_entries));
    return ctx.verdict(good == workers,
                       format("%d of %d workers reported the right sum for their slice and wrote "
                              "the right results into the shared buffer",
                              good, workers));
}

TUTORIAL_SECTION(master_workers, run_master_workers);
TUTORIAL_CHILD(slice_worker, child_slice_worker);
