// Chapter 07: sharing GPU memory and events between processes.
#include "common/cli.hpp"
#include "sections.hpp"

int main(int argc, char** argv) {
    using tutorial::GiB;
    using tutorial::Section;
    using tutorial::Takes;
    // Each worker process creates a CUDA context (hundreds of MiB of device memory and a few
    // hundred ms each): a handful makes the point. Sizes are read 16 bytes at a time.
    const Takes batch = Takes{}.size(16, 2 * GiB).workers(1, 16);
    const tutorial::Chapter chapter{
        "07_ipc",
        "Sharing GPU memory and events between processes",
        {
            Section{"properties", "what this device offers for interprocess sharing",
                    run_properties},
            Section{"master_workers", "the master's batch, used in place by N workers",
                    run_master_workers, batch},
            Section{"ipc_events", "a producer/consumer pipeline ordered by an IPC event",
                    run_ipc_events, Takes{}.iters()},
            Section{"vmm_fd", "a VMM allocation passed as a file descriptor", run_vmm_fd},
            Section{"pitfalls", "IPC calls used the wrong way (fault)", run_pitfalls},
            Section{"robustness", "a crashing worker, workers losing their master: no hangs",
                    run_robustness, Takes{}.workers(2, 16)},  // worker 1 is the one that crashes
            Section{"bench", "IPC vs pipe + upload; open latency; in-place reads", run_bench,
                    batch},
            Section{"pool_ipc", "a pool shared by descriptor, its blocks by export data",
                    run_pool_ipc},
            Section{"which_memory", "every kind of memory against every way of sharing it",
                    run_which_memory},
            Section{"cross_gpu", "workers on other GPUs use the master's memory (2+ GPUs)",
                    run_cross_gpu},
        },
        {
            {"slice_worker", child_slice_worker},
            {"consumer", child_consumer},
            {"fd_importer", child_fd_importer},
            {"ipc_misuse", child_ipc_misuse},
            {"open_and_peek", child_open_and_peek},
            {"bench_ipc", child_bench_ipc},
            {"bench_pipe", child_bench_pipe},
            {"doomed_master", child_doomed_master},
            {"stuck_worker", child_stuck_worker},
            {"cross_gpu_worker", child_cross_gpu_worker},
            {"pool_importer", child_pool_importer},
            {"pool_late_importer", child_pool_late_importer},
            {"share_exporter", child_share_exporter},
            {"share_worker", child_share_worker},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
