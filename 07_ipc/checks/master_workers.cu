// Checks of section master_workers: runs the walkthrough of ../master_workers.cu with N worker
// processes, each this program in the child role `slice_worker` (the lesson's worker()); prints
// where each worker saw the buffers and what it did, and states the lesson as claims. Two more
// roles serve section robustness, which runs the same batch with one worker crashing.
#include "07_ipc/master_workers.cu"

#include "../helpers/ipc_common.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <sys/wait.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

using tutorial::Align;
using tutorial::format;

namespace {

// How a worker ended, in the harness's words ("exited with code 0", "died with SIGSEGV").
std::string ended(int status) {
    return child_result(status).describe();
}

bool exited_cleanly(int status) {
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Worker w's sum is the sum of its slice of the pattern.
bool sum_right(const Found& found, std::size_t w) {
    const Task& task = found.tasks[w];
    return found.answered[w] &&
           found.answers[w].sum == slice_sum(task.offset, task.count, batch_seed);
}

}  // namespace

// Child role `slice_worker` (args: device): the lesson's worker.
int child_slice_worker(const std::vector<std::string>& args) {
    return worker(std::atoi(args.at(0).c_str()));
}

// Child role `crash_at` (args: the victim's offset, then "slice_worker" and the device, as the
// walkthrough appends them): a worker, except that the one whose slice starts at that offset
// opens the master's input and crashes while it holds the handle.
int child_crash_at(const std::vector<std::string>& args) {
    const std::size_t victim = std::strtoull(args.at(0).c_str(), nullptr, 10);
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(2).c_str())));
    Task task{};
    if (!read_all(STDIN_FILENO, &task, sizeof task)) return 4;
    if (task.offset == victim) {
        void* input = nullptr;
        CUDA_CHECK(cudaIpcOpenMemHandle(&input, task.input, cudaIpcMemLazyEnablePeerAccess));
        std::fprintf(
            stderr, "worker: input at %p; crashing on purpose, in the middle of the task\n", input);
        std::raise(SIGSEGV);
    }
    const Answer answer = work_on_slice(task);
    return send_all(STDOUT_FILENO, &answer, sizeof answer) ? 0 : 4;
}

// Child role `batch_with_crash` (args: device, workers, count, victim): the walkthrough's batch,
// with worker `victim` crashing (child_crash_at). One line per worker: "worker W|<how it
// ended>|<its sum: correct or WRONG>|<its results: correct or WRONG>".
int child_batch_with_crash(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    const int workers = std::atoi(args.at(1).c_str());
    const std::size_t count = std::strtoull(args.at(2).c_str(), nullptr, 10);
    const int victim = std::atoi(args.at(3).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const std::size_t victim_offset = victim * (count / workers / 4 * 4);  // as the walkthrough
    const Found found = walkthrough(
        count, workers, device,
        {"/proc/self/exe", tutorial::child_flag, "crash_at", std::to_string(victim_offset)});
    for (std::size_t w = 0; w < found.tasks.size(); ++w) {
        std::printf("worker %zu|%s|%s|%s\n", w, ended(found.statuses[w]).c_str(),
                    sum_right(found, w) ? "correct" : "WRONG",
                    found.wrong[w] == 0 ? "correct" : "WRONG");
    }
    return 0;
}

namespace {

void print_workers(const Found& found) {
    std::printf("master: input at %p, result at %p\n", found.input, found.result);
    tutorial::Table table({{"worker"},
                           {"slice", Align::right},
                           {"addresses in the worker"},
                           {"ended"},
                           {"sum"},
                           {"results"}});
    for (std::size_t w = 0; w < found.tasks.size(); ++w) {
        const Answer& a = found.answers[w];
        table.add_row({format("%zu", w),
                       format("%zu + %zu", found.tasks[w].offset, found.tasks[w].count),
                       found.answered[w] ? format("input at %p, result at %p", a.input, a.result)
                                         : "(no answer)",
                       ended(found.statuses[w]), sum_right(found, w) ? "correct" : "WRONG",
                       found.wrong[w] == 0 ? "correct" : "WRONG"});
    }
    table.print();
}

}  // namespace

tutorial::Result run_master_workers(tutorial::Context& ctx) {
    if (const std::string why = why_no_legacy_ipc(ctx.device); !why.empty()) return ctx.skip(why);
    const std::size_t count = ctx.size_or(ctx.quick() ? (4 << 20) : (256 << 20)) / 4;
    // Each worker holds a context of its own, the master the two buffers: as many workers as the
    // free memory holds, asked for or not.
    const WorkerMemory need{0, 0, 2 * count * 4, 0};
    const int wanted = ctx.workers_or(ctx.quick() ? 2 : 4);
    const int workers = workers_fitting(wanted, need);
    if (workers < 1) return ctx.skip(workers_note(wanted, workers, need));
    if (workers < wanted) {
        std::printf("%s: running %d.\n\n", workers_note(wanted, workers, need).c_str(), workers);
    }
    std::printf(
        "The master fills %s on the device and starts %d workers (fork + exec of this program).\n"
        "Each gets, over its socket, the IPC handles of the input and result buffers and its\n"
        "slice as an offset and a count; it sums its slice, writes 2 * x + 1 into the result\n"
        "buffer, closes the handles and answers with the sum and the addresses it saw.\n\n",
        tutorial::format_bytes(count * 4).c_str(), workers);
    const Found found = walkthrough(count, workers, ctx.device, {"/proc/self/exe", "--child"});
    print_workers(found);
    int read_ok = 0, wrote_ok = 0, good = 0;
    for (std::size_t w = 0; w < found.tasks.size(); ++w) {
        read_ok += sum_right(found, w);
        wrote_ok += found.wrong[w] == 0;
        good += sum_right(found, w) && found.wrong[w] == 0 && exited_cleanly(found.statuses[w]);
    }
    std::printf(
        "\nThe same memory appears at a different address in each process, which is why the\n"
        "slices travel as offsets: a pointer from the master would mean nothing in a worker.\n\n");
    ctx.claim(tutorial::documented(
        "reads_in_place",
        "through an IPC handle, a worker reads the master's device memory in place",
        read_ok == workers, format("%d of %d workers' sums correct", read_ok, workers),
        "a worker could not open the handle; its line in the table says how it ended",
        tutorial::Entry{"Programming Guide, Interprocess Communication",
                        "cudaIpcGetMemHandle cudaIpcOpenMemHandle", "can"}));
    // cudaIpcOpenMemHandle maps the exported memory into the worker's address space: the same
    // memory, for writing as for reading.
    ctx.claim(tutorial::documented(
        "writes_reach_master",
        "what workers write through their handles is in the master's buffer, with no copy",
        wrote_ok == workers, format("%d of %d slices correct in the master", wrote_ok, workers),
        "a worker closed its handle before its kernel had finished",
        tutorial::Entry{"Runtime API reference: cudaIpcOpenMemHandle",
                        "exported cudaIpcGetMemHandle", "maps"}));
    return ctx.verdict(good == workers,
                       format("%d of %d workers reported the right sum for their slice and wrote "
                              "the right results into the shared buffer",
                              good, workers));
}

TUTORIAL_SECTION(master_workers, run_master_workers);
TUTORIAL_CHILD(slice_worker, child_slice_worker);
TUTORIAL_CHILD(crash_at, child_crash_at);
TUTORIAL_CHILD(batch_with_crash, child_batch_with_crash);
