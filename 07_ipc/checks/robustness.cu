// Checks of section robustness: first a worker crashes in the middle of a batch run as
// master_workers teaches it (that section's child role `batch_with_crash`, in a child process of
// its own); then ../robustness.cu's walkthrough takes a worker's master away three ways. What the
// operating system does is documented outside CUDA (a read returns end-of-file once every write
// end is closed: POSIX; PR_SET_PDEATHSIG: Linux's prctl), and the verdict rests on it. What the
// CUDA driver does when a process holding IPC mappings or device memory dies is in no Guide
// section or API entry: those outcomes are observed on this driver, never judged.
#include "07_ipc/robustness.cu"

#include "../helpers/ipc_common.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <sstream>

using tutorial::format;

// Child roles: the walkthrough's workers, as the lesson's main() dispatches them.
int child_orphan_worker(const std::vector<std::string>& args) {
    return orphan_worker(std::atof(args.at(0).c_str()));
}

int child_stuck_worker(const std::vector<std::string>& args) {
    return stuck_worker(std::atoi(args.at(0).c_str()),
                        std::strtoull(args.at(1).c_str(), nullptr, 10));
}

int child_doomed_master(const std::vector<std::string>& args) {
    return doomed_master({"/proc/self/exe", tutorial::child_flag}, std::atoi(args.at(0).c_str()),
                         std::strtoull(args.at(1).c_str(), nullptr, 10));
}

namespace {

constexpr std::size_t held_bytes = 256 << 20;   // what the stuck worker holds
constexpr std::size_t memory_slack = 64 << 20;  // free memory may drift by this much meanwhile

// How a worker ended, in the harness's words ("exited with code 0", "died with SIGSEGV").
std::string ended(int status) {
    return child_result(status).describe();
}

bool exited_with(int status, int code) {
    return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

struct Crash {
    bool reported = false;  // the master saw the victim crash
    int others_good = 0;    // other workers whose sum and results were right
    std::string victim_ended = "(no line)";
};

// Part 1: master_workers' batch, in which worker `victim` crashes while it holds the handles. The
// master's memory is its own, and it frees its buffers as usual once every worker has ended.
Crash crash_in_batch(int device, int workers, int victim, std::size_t count) {
    const tutorial::ChildResult batch =
        tutorial::run_child("batch_with_crash",
                            {std::to_string(device), std::to_string(workers), std::to_string(count),
                             std::to_string(victim)},
                            "", 90.0);
    tutorial::Table table({{"worker"}, {"ended"}, {"sum"}, {"results"}});
    Crash crash;
    std::istringstream lines(batch.output);
    std::string line;
    while (std::getline(lines, line)) {
        int w = -1;
        char how[64] = {}, sum[8] = {}, results[8] = {};
        if (std::sscanf(line.c_str(), "worker %d|%63[^|]|%7[^|]|%7s", &w, how, sum, results) != 4) {
            if (line.find("crashing on purpose") != std::string::npos) {
                std::printf("%s\n", line.c_str());
            }
            continue;
        }
        const bool right = std::string(sum) == "correct" && std::string(results) == "correct";
        if (w == victim) {
            crash.victim_ended = how;
            crash.reported = crash.victim_ended.rfind("died with", 0) == 0;
            std::printf("master: worker %d %s; its slice is not trusted.\n", w, how);
        } else {
            crash.others_good += right && std::string(how) == "exited with code 0";
        }
        table.add_row({format("%d", w), how, w == victim ? "-" : sum, w == victim ? "-" : results});
    }
    if (!batch.succeeded()) tutorial::print_child_output(batch);
    std::printf("\n");
    table.print();
    return crash;
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
    if (workers < wanted) {
        std::printf("%s: running %d.\n\n", workers_note(wanted, workers, need).c_str(), workers);
    }
    std::printf("1. %d workers; worker %d is told to crash in the middle of its task.\n\n", workers,
                victim);
    const Crash crash = crash_in_batch(ctx.device, workers, victim, count);
    std::printf(
        "\n2. to 4. A worker whose master closes the channel after half a task (as its death\n"
        "would), one whose master keeps it open and sends nothing (the worker's own deadline:\n"
        "2 s), and one in a long kernel, holding %zu MiB of device memory, whose master is\n"
        "killed with SIGKILL (no destructor runs, nothing is closed politely).\n\n",
        held_bytes >> 20);
    const Found f = walkthrough(ctx.device, held_bytes, {"/proc/self/exe", tutorial::child_flag});
    const bool noticed = exited_with(f.lost_status, 4);
    const bool gave_up = exited_with(f.silent_status, 5);
    const bool died_with_master =
        f.worker_gone && WIFSIGNALED(f.worker_status) && WTERMSIG(f.worker_status) == SIGKILL;
    std::printf(
        "The operating system's part, on which the verdict rests:\n"
        "  lost channel (a read at end-of-file, POSIX): the worker %s\n"
        "  silent master (the worker's own 2 s deadline): the worker %s\n"
        "  killed master (PR_SET_PDEATHSIG, Linux's prctl): the worker %s\n"
        "Free device memory: %zu MiB before the worker held its memory, %zu MiB while it did,\n"
        "%zu MiB after.\n\n",
        ended(f.lost_status).c_str(), ended(f.silent_status).c_str(),
        !f.worker_reported ? "never reported that it held its memory"
        : died_with_master ? format("died with SIGKILL %.0f ms after it", f.gone_ms).c_str()
                           : "did not die with it within 5 s",
        f.free_before >> 20, f.free_holding >> 20, f.free_after >> 20);
    ctx.claim(tutorial::observed(
        "crash_harms_nobody",
        "a worker that crashes while holding IPC handles harms neither the master nor the others",
        crash.others_good == workers - 1,
        format("worker %d %s; %d of %d others verified", victim, crash.victim_ended.c_str(),
               crash.others_good, workers - 1),
        "no Guide section or API entry says what the death of a process that opened IPC handles "
        "does to the exporter's memory or to other importers"));
    ctx.claim(tutorial::observed(
        "memory_comes_back",
        "the device memory a killed worker held comes back (free memory before, while held, after)",
        f.free_holding + held_bytes <= f.free_before &&
            f.free_after + memory_slack >= f.free_before,
        format("%zu, %zu, %zu MiB", f.free_before >> 20, f.free_holding >> 20, f.free_after >> 20),
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
