// Checks of section robustness: a worker crashes in the middle of a batch run as master_workers
// teaches it, and workers lose their master in three ways: the master closes the channel, the
// master stays alive but never sends a task, the master is killed. Each waits as
// ../robustness.cu teaches. What the operating system does is documented outside CUDA (a read
// returns end-of-file once every write end is closed: POSIX; PR_SET_PDEATHSIG: Linux's prctl), and
// the verdict rests on it. What the CUDA driver does when a process holding IPC mappings or device
// memory dies is in no Guide section or API entry: those outcomes are observed on this driver,
// never judged.
#include "07_ipc/robustness.cu"
// The batch of part 1 is the one master_workers teaches, its workers that section's `slice_worker`.
#include "07_ipc/master_workers.cu"

#include "../helpers/ipc_common.hpp"
#include "../helpers/slice_workers.hpp"
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

using tutorial::ChildProcess;
using tutorial::ChildResult;
using tutorial::Deadline;
using tutorial::format;

// Child role `orphan_worker` (args: device, how many seconds to wait for a task): a worker whose
// master never sends its task. It reads as the lesson's Step 2 does and says how that ended.
int child_orphan_worker(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const double timeout_s = std::atof(args.at(1).c_str());
    std::string line;
    const Task task = read_task(STDIN_FILENO, timeout_s, &line);
    if (task == Task::master_silent) {
        std::printf("no task within %.0f s, though the channel is open: giving up\n", timeout_s);
        return 5;
    }
    if (task == Task::master_gone) {
        std::printf("the channel closed before a task arrived: exiting\n");
        return 4;
    }
    std::printf("a task arrived: %s\n", line.c_str());
    return 0;
}

// Child role `stuck_worker` (args: device, bytes): holds `bytes` of device memory and sits in a
// 30 s kernel, the way a worker is busy when its master dies. It says when it holds the memory.
int child_stuck_worker(const std::vector<std::string>& args) {
    die_with_master();  // Step 1: its master's death ends it, wherever it is
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const std::size_t bytes = std::strtoull(args.at(1).c_str(), nullptr, 10);
    void* held = nullptr;
    CUDA_CHECK(cudaMalloc(&held, bytes));
    CUDA_CHECK(cudaMemset(held, 0, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
    std::printf("holds %zu MiB of device memory and is in a 30 s kernel\n", bytes >> 20);
    tutorial::launch_busy(nullptr, 30000.0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(held));
    return 0;
}

// Child role `doomed_master` (args: device, bytes): starts a stuck_worker, says which process it
// is once it holds its memory, and waits to be killed. It never touches CUDA itself.
int child_doomed_master(const std::vector<std::string>& args) {
    ChildProcess worker("stuck_worker", {args.at(0), args.at(1)});
    std::string line;
    if (!worker.read_line(line, 30.0)) {
        std::printf("the worker did not report: %s\n", worker.wait(10.0).describe().c_str());
        return 3;
    }
    std::printf("worker %d %s\n", static_cast<int>(worker.pid()), line.c_str());
    std::this_thread::sleep_for(std::chrono::seconds(60));  // killed long before this ends
    return 3;
}

namespace {

constexpr std::uint32_t crash_seed = 43;
constexpr std::size_t held_bytes = 256 << 20;   // what the stuck worker holds
constexpr std::size_t memory_slack = 64 << 20;  // free memory may drift by this much meanwhile

struct MasterKilled {
    bool worker_reported = false;  // the worker held its memory before the master was killed
    bool worker_gone = false;      // it ended within the deadline...
    int worker_signal = 0;         // ...killed by this signal, which we did not send
    double gone_ms = 0.0;          // after the master's death
    std::size_t before = 0, holding = 0, after = 0;  // free device memory (bytes)
};

// Starts a master that starts a worker, kills the master with SIGKILL (no destructor, no clean
// close) and watches the worker, which we adopt as its subreaper: PR_SET_PDEATHSIG, which every
// child of ChildProcess gets, must end it, and the driver must take back its memory.
MasterKilled kill_a_master(int device) {
    MasterKilled r;
    prctl(PR_SET_CHILD_SUBREAPER, 1);  // orphans of our children come to us, so we can see
                                       // how the worker ended
    r.before = tutorial::free_device_memory();
    ChildProcess master("doomed_master", {std::to_string(device), std::to_string(held_bytes)});
    std::string line;
    int worker = 0;
    r.worker_reported = master.read_line(line, 30.0) &&
                        std::sscanf(line.c_str(), "worker %d", &worker) == 1 && worker > 0;
    std::printf("   master: %s\n", line.c_str());
    r.holding = tutorial::free_device_memory();
    kill(master.pid(), SIGKILL);  // the master alone, not its worker
    const tutorial::HostTimer since_kill;
    std::printf("   The master %s.\n", master.wait(10.0).describe().c_str());
    int status = 0;
    if (r.worker_reported) {
        r.worker_gone = wait_with_deadline(worker, 5.0, &status);  // Step 3
        r.gone_ms = since_kill.elapsed_ms();
        if (r.worker_gone && WIFSIGNALED(status)) r.worker_signal = WTERMSIG(status);
        if (!r.worker_gone) {  // it outlived its master: end it ourselves
            kill(worker, SIGKILL);
            wait_with_deadline(worker, tutorial::child_reap_timeout_s, &status);
        }
    }
    // A dead process's device memory comes back once the driver has torn down its context: no
    // CUDA reference says when; on driver 580 it was back within this deadline.
    const Deadline memory_deadline(10.0);
    do {
        r.after = tutorial::free_device_memory();
    } while (r.after + memory_slack < r.before && memory_deadline.milliseconds_left() > 0);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    return r;
}

struct Crash {
    bool reported;    // the master saw the victim crash
    int others_good;  // other workers whose results were verified
    std::string victim_ended;
};

// master_workers' batch, whose worker `victim` crashes while it holds the handles. The master's
// memory is its own, and it frees its buffers as usual once every worker has ended. (What a dying
// importer does to them, the CUDA reference does not say.)
std::vector<WorkerOutcome> batch_with_a_crash(int device, std::size_t count, int workers,
                                              int victim) {
    const Batch batch = put_batch_on_gpu(count, crash_seed);
    const std::vector<std::string> lines = task_lines(batch, count, workers);
    std::vector<Slice> slices;
    for (const std::string& line : lines) {
        SliceTask task{};
        parse_task_line(line, &task);
        slices.push_back({task.offset, task.count});
    }
    const std::vector<WorkerOutcome> outcomes =
        run_slice_workers(device, lines, slices, victim, crash_seed, batch.result);
    free_batch(batch);
    return outcomes;
}

// Part 1: a batch in which worker `victim` crashes while it holds the master's IPC handles.
Crash crash_in_batch(int device, int workers, int victim, std::size_t count) {
    const std::vector<WorkerOutcome> outcomes = batch_with_a_crash(device, count, workers, victim);
    tutorial::Table table({{"worker"}, {"ended"}, {"sum"}, {"results"}});
    Crash crash{false, 0, outcomes[victim].child.describe()};
    for (int w = 0; w < workers; ++w) {
        const WorkerOutcome& o = outcomes[w];
        if (w == victim) {
            crash.reported = o.child.crashed();
            std::printf("master: worker %d %s; its slice is not trusted.\n", w,
                        o.child.describe().c_str());
        } else {
            crash.others_good += o.child.succeeded() && o.checksum_ok && o.results_ok;
        }
        table.add_row({format("%d", w), o.child.describe(),
                       w == victim ? "-" : (o.checksum_ok ? "correct" : "WRONG"),
                       w == victim ? "-" : (o.results_ok ? "correct" : "WRONG")});
    }
    std::printf("\n");
    table.print();
    return crash;
}

// Parts 2 and 3: a worker whose master closes the channel, and one whose master stays silent.
// Returns how each ended.
std::pair<ChildResult, ChildResult> lose_the_master(int device) {
    std::printf(
        "\n2. A worker whose master goes away before sending its task: the master closes the\n"
        "   channel without a word (as its death would), and the worker must notice.\n");
    ChildProcess orphan("orphan_worker", {std::to_string(device), std::to_string(task_timeout_s)});
    orphan.send("half a ta");  // no newline: the task never completes
    const ChildResult closed = orphan.wait(20.0);
    tutorial::print_child_output(closed);
    std::printf("   The worker %s.\n", closed.describe().c_str());

    std::printf(
        "\n3. A master that is alive but stuck: it keeps the channel open and sends nothing.\n"
        "   The worker waits for its task with a deadline of its own, here 2 s.\n");
    ChildProcess waiting("orphan_worker", {std::to_string(device), "2"});
    std::string said;
    waiting.read_line(said, 20.0);  // the channel stays open all this time
    const ChildResult silent = waiting.wait(10.0);
    tutorial::print_child_output(silent);
    std::printf("   The worker %s.\n", silent.describe().c_str());
    return {closed, silent};
}

}  // namespace

tutorial::Result run_robustness(tutorial::Context& ctx) {
    if (const std::string why = why_no_legacy_ipc(ctx.device); !why.empty()) return ctx.skip(why);
    const int victim = 1;
    const std::size_t count = (ctx.quick() ? (4 << 20) : (64 << 20)) / 4;
    // Each worker holds a context of its own, the master the batch's two buffers: as many workers
    // as the free memory holds, asked for or not, and at least the victim and one other.
    const WorkerMemory need{0, 0, 2 * count * 4, 0};
    const int wanted = ctx.workers_or(3);
    const int workers = workers_fitting(wanted, need);
    if (workers < 2) return ctx.skip(workers_note(wanted, workers, need));
    if (workers < wanted) std::printf("%s: running %d.\n\n", workers_note(wanted, workers, need).c_str(), workers);
    std::printf("1. %d workers; worker %d is told to crash in the middle of its task.\n\n", workers,
                victim);
    const Crash crash = crash_in_batch(ctx.device, workers, victim, count);
    const auto [closed, silent] = lose_the_master(ctx.device);
    const bool noticed = closed.exited && closed.exit_code == 4;
    const bool gave_up = silent.exited && silent.exit_code == 5;

    std::printf(
        "\n4. A master is killed (SIGKILL: no destructor runs, nothing is closed politely) while\n"
        "   its worker holds %zu MiB of device memory and sits in a long kernel, reading "
        "nothing.\n",
        held_bytes >> 20);
    const MasterKilled killed = kill_a_master(ctx.device);
    const bool died_with_master = killed.worker_gone && killed.worker_signal == SIGKILL;
    std::printf(
        "   The worker %s; free device memory: %zu MiB before, %zu MiB while it ran, %zu MiB "
        "after.\n\n",
        !killed.worker_reported ? "never reported"
        : died_with_master ? format("died with SIGKILL %.0f ms after its master (PR_SET_PDEATHSIG)",
                                    killed.gone_ms)
                                 .c_str()
                           : "outlived its master and was killed by us",
        killed.before >> 20, killed.holding >> 20, killed.after >> 20);

    std::printf(
        "The operating system's part, on which the verdict rests:\n"
        "  lost channel (a read at end-of-file, POSIX): the worker %s\n"
        "  silent master (the worker's own 2 s deadline): the worker %s\n"
        "  killed master (PR_SET_PDEATHSIG, Linux's prctl): the worker %s\n\n",
        closed.describe().c_str(), silent.describe().c_str(),
        died_with_master ? format("died with SIGKILL %.0f ms after it", killed.gone_ms).c_str()
                         : "did not die with it within 5 s");
    ctx.claim(tutorial::observed(
        "crash_harms_nobody", "a worker that crashes while holding IPC handles harms neither the master nor the others",
        crash.others_good == workers - 1,
        format("worker %d %s; %d of %d others verified", victim, crash.victim_ended.c_str(),
               crash.others_good, workers - 1),
        "no Guide section or API entry says what the death of a process that opened IPC handles "
        "does to the exporter's memory or to other importers"));
    ctx.claim(tutorial::observed(
        "memory_comes_back", "the device memory a killed worker held comes back (free memory before, while held, after)",
        killed.holding + held_bytes <= killed.before &&
            killed.after + memory_slack >= killed.before,
        format("%zu, %zu, %zu MiB", killed.before >> 20, killed.holding >> 20, killed.after >> 20),
        "no Guide section or API entry says when the driver takes back a killed process's "
        "device memory"));
    return ctx.verdict(crash.reported && noticed && gave_up && died_with_master,
                       format("the crash of worker %d was detected and reported, and every worker "
                              "that lost its master ended (end-of-file, its own deadline, its "
                              "master's death)",
                              victim));
}

TUTORIAL_SECTION(robustness, run_robustness);
TUTORIAL_CHILD(doomed_master, child_doomed_master);
TUTORIAL_CHILD(stuck_worker, child_stuck_worker);
TUTORIAL_CHILD(orphan_worker, child_orphan_worker);
