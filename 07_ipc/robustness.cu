// Section `robustness`: one worker crashes in the middle of its task, and a worker loses its
// master. Nobody hangs: every wait has a deadline, and every channel end is watched.
#include "common/child.hpp"
#include "common/report.hpp"
#include "master_workers.hpp"
#include "sections.hpp"

#include <cstdio>

using tutorial::ChildProcess;
using tutorial::ChildResult;
using tutorial::format;

tutorial::Result run_robustness(tutorial::Context& ctx) {
    const int workers = ctx.workers_or(3);
    const int victim = 1;
    const std::size_t count = (ctx.quick() ? (4 << 20) : (64 << 20)) / 4;
    std::printf("1. %d workers; worker %d is told to crash in the middle of its task.\n\n", workers,
                victim);
    const BatchOutcome batch = run_batch(ctx.device, count, workers, victim);
    tutorial::Table table({{"worker"}, {"ended"}, {"sum"}, {"results"}});
    bool crash_reported = false;
    int others_good = 0;
    for (int w = 0; w < workers; ++w) {
        const WorkerOutcome& o = batch.workers[w];
        if (w == victim) {
            crash_reported = o.child.crashed();
            std::printf("master: worker %d %s; its slice is not trusted.\n", w,
                        o.child.describe().c_str());
        } else {
            others_good += o.child.succeeded() && o.checksum_ok && o.results_ok;
        }
        table.add_row({format("%d", w), o.child.describe(),
                       w == victim ? "-" : (o.checksum_ok ? "correct" : "WRONG"),
                       w == victim ? "-" : (o.results_ok ? "correct" : "WRONG")});
    }
    std::printf("\n");
    table.print();

    std::printf(
        "\n2. A worker whose master goes away before sending its task: the master closes the\n"
        "   channel without a word (as its death would), and the worker must notice.\n");
    ChildProcess orphan("slice_worker", {std::to_string(ctx.device), "work"});
    orphan.send("half a ta");  // no newline: the task never completes
    const ChildResult left = orphan.wait(20.0);
    tutorial::print_child_output(left);
    std::printf("   The worker %s.\n", left.describe().c_str());
    const bool noticed = left.exited && left.exit_code == 4;
    std::printf(
        "\nHad the master really died, the same end-of-file would arrive; and since every child\n"
        "is started with PR_SET_PDEATHSIG, a worker stuck anywhere else is killed with it.\n\n");
    ctx.claim(tutorial::observed(
        "a worker that crashes while holding IPC handles harms neither the master nor the others",
        crash_reported && others_good == workers - 1,
        format("worker %d %s; %d of %d others verified", victim,
               batch.workers[victim].child.describe().c_str(), others_good, workers - 1),
        "the crash took the shared memory's owner or the other workers' contexts with it"));
    ctx.claim(
        tutorial::observed("a worker whose master vanishes sees end-of-file and exits, never hangs",
                           noticed, "the worker " + left.describe(),
                           "the worker's read has no end-of-file check or no deadline"));
    return ctx.verdict(crash_reported && others_good == workers - 1 && noticed,
                       format("the crash of worker %d was detected and reported, the other %d "
                              "workers' results verified, and the orphaned worker exited on "
                              "end-of-file",
                              victim, workers - 1));
}
