// Section `master_workers`: the scenario of the CUDA Programming Guide's interprocess
// communication section. A master process puts a batch of data on the GPU once, and worker
// processes use it in place through IPC handles.
#include "master_workers.hpp"

#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/report.hpp"
#include "helpers/channel.hpp"
#include "helpers/ipc_common.hpp"
#include "sections.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>

using tutorial::Align;
using tutorial::format;

namespace {

constexpr std::uint32_t batch_seed = 41;

// What the master learns from a worker once it has ended: the addresses it printed, the sum it
// answered on its channel ("checksum N"), and its slice of the result checked.
void check_worker(WorkerOutcome& outcome, const std::string& answer, const std::uint32_t* result) {
    const std::string& text = outcome.child.output;
    const std::size_t at = text.find("input at ");
    if (at != std::string::npos) outcome.mapped = text.substr(at, text.find(';', at) - at);
    const std::string expected = format(
        "checksum %llu",
        static_cast<unsigned long long>(slice_sum(outcome.offset, outcome.count, batch_seed)));
    outcome.checksum_ok = answer == expected;
    // The worker wrote 2 * x + 1 over its slice of the pattern.
    outcome.results_ok = mismatches_on_device(result + outcome.offset, outcome.count, batch_seed,
                                              {2, 1}, outcome.offset) == 0;
}

}  // namespace

// Child role `slice_worker` (args: device, "work" or "crash", and optionally how many seconds
// to wait for the task): reads its task on stdin, opens the master's two buffers, sums its slice
// of the input and writes 2 * x + 1 into the result.
int child_slice_worker(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const bool crash = args.at(1) == "crash";
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
    // The handles name the master's allocations; here they get addresses of this process.
    void* input = nullptr;
    void* result = nullptr;
    CUDA_CHECK(cudaIpcOpenMemHandle(&input, task.input, cudaIpcMemLazyEnablePeerAccess));
    CUDA_CHECK(cudaIpcOpenMemHandle(&result, task.result, cudaIpcMemLazyEnablePeerAccess));
    std::printf("input at %p, result at %p; slice %zu + %zu\n", input, result, task.offset,
                task.count);
    if (crash) {
        std::printf("crashing on purpose, in the middle of the task\n");
        std::fflush(stdout);
        std::raise(SIGSEGV);
    }
    const auto* in = static_cast<const std::uint32_t*>(input) + task.offset;
    auto* out = static_cast<std::uint32_t*>(result) + task.offset;
    const std::uint64_t checksum = sum_on_device(in, task.count);
    transform(in, out, task.count, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());  // finished with the memory before letting go of it
    CUDA_CHECK(cudaIpcCloseMemHandle(input));
    CUDA_CHECK(cudaIpcCloseMemHandle(result));
    // The answer goes over the channel, the master's one way of hearing from its workers.
    send_line(tutorial::child_passed_fd,
              format("checksum %llu", static_cast<unsigned long long>(checksum)));
    return 0;
}

BatchOutcome run_batch(int device, std::size_t count, int workers, int crash_worker) {
    std::uint32_t* input = nullptr;
    std::uint32_t* result = nullptr;
    CUDA_CHECK(cudaMalloc(&input, count * sizeof *input));
    CUDA_CHECK(cudaMalloc(&result, count * sizeof *result));
    fill_on_device(input, count, batch_seed);
    CUDA_CHECK(cudaMemset(result, 0, count * sizeof *result));
    // A handle for each buffer: opaque bytes another process can open. Made once, for everyone.
    SliceTask task{};
    CUDA_CHECK(cudaIpcGetMemHandle(&task.input, input));
    CUDA_CHECK(cudaIpcGetMemHandle(&task.result, result));

    // Slices are whole multiples of 4 elements (the workers' sum kernel reads 16 bytes at once).
    const std::size_t per_worker = count / workers / 4 * 4;
    BatchOutcome batch{
        reinterpret_cast<std::uintptr_t>(input), reinterpret_cast<std::uintptr_t>(result), {}};
    std::vector<std::unique_ptr<tutorial::ChildProcess>> children;
    std::vector<std::unique_ptr<Channel>> channels;
    for (int w = 0; w < workers; ++w) {
        task.offset = w * per_worker;
        task.count = w + 1 == workers ? count - task.offset : per_worker;
        channels.push_back(std::make_unique<Channel>());
        children.push_back(std::make_unique<tutorial::ChildProcess>(
            "slice_worker",
            std::vector<std::string>{std::to_string(device), w == crash_worker ? "crash" : "work"},
            channels.back()->worker_end()));
        channels.back()->close_worker_end();
        children.back()->send(encode(task) + "\n");
        batch.workers.push_back({task.offset, task.count, {}, false, false, ""});
    }
    // One deadline for the whole batch, not one per worker: a stuck batch of 16 workers costs
    // 60 s, not 16 minutes.
    const tutorial::Deadline deadline(60.0);
    for (int w = 0; w < workers; ++w) {
        batch.workers[w].child = children[w]->wait(deadline.seconds_left());
        std::string answer;  // sent before the worker ended, so it is waiting in the socket
        if (!read_line(channels[w]->master_end(), answer, 1.0)) answer = "(no answer)";
        check_worker(batch.workers[w], answer, result);
    }
    CUDA_CHECK(cudaFree(input));
    CUDA_CHECK(cudaFree(result));
    return batch;
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
    const BatchOutcome batch = run_batch(ctx.device, count, workers, -1);

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
    ctx.claim(tutorial::observed(
        "through an IPC handle, a worker reads the master's device memory in place",
        read_ok == workers, format("%d of %d workers' sums correct", read_ok, workers),
        "a worker could not open the handle; its line in the table says how it ended"));
    ctx.claim(tutorial::observed(
        "what workers write through their handles is in the master's buffer, with no copy",
        wrote_ok == workers, format("%d of %d slices correct in the master", wrote_ok, workers),
        "a worker closed its handle before its kernel had finished"));
    return ctx.verdict(good == workers,
                       format("%d of %d workers reported the right sum for their slice and wrote "
                              "the right results into the shared buffer",
                              good, workers));
}
