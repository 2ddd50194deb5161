// Chapter 07: sharing GPU memory and events between processes.
#include "common/harness/chapter.hpp"

int main(int argc, char** argv) {
    using tutorial::GiB;
    using tutorial::Section;
    using tutorial::Takes;
    // Each worker process creates a CUDA context (hundreds of MiB of device memory and a few
    // hundred ms each): a handful makes the point, and the sections run as many as the free memory
    // holds. Sizes are read 16 bytes at a time. The master of `master_workers` holds two buffers of
    // --size on the device (input and result); the master of `bench` one on the device and its
    // pinned copy on the host.
    const Takes batch = Takes{}.size(16, 2 * GiB).workers(1, 16).holds(2, 0);
    const Takes bench = Takes{}.size(16, 2 * GiB).workers(1, 16).holds(1, 1);
    const tutorial::Chapter chapter{
        "07_ipc",
        "Sharing GPU memory and events between processes",
        {
            Section{"properties", "what this device offers for interprocess sharing"},
            Section{"master_workers", "the master's batch, used in place by N workers", batch},
            Section{"ipc_events", "a producer/consumer pipeline ordered by an IPC event",
                    Takes{}.iters()},
            Section{"vmm_fd", "a VMM allocation passed as a file descriptor"},
            Section{"pitfalls", "IPC calls used the wrong way (fault)"},
            Section{"robustness", "a crashing worker, workers losing their master: no hangs",
                    Takes{}.workers(2, 16)},  // worker 1 is the one that crashes
            Section{"bench", "IPC vs pipe + upload; open latency; in-place reads", bench},
            Section{"pool_ipc", "a pool shared by descriptor, its blocks by export data"},
            Section{"which_memory", "every kind of memory against every way of sharing it"},
            Section{"host_shared", "pinned host memory two processes use in place, three ways"},
            Section{"dmabuf", "device memory as a dma-buf descriptor, for NICs and other drivers"},
            Section{"cross_gpu", "workers on other GPUs use the master's memory (2+ GPUs)"},
            Section{"checkpoint", "a child's GPU memory checkpointed to host memory, restored",
                    Takes{}.size(2 << 20, 2 * GiB, 16 << 20).holds(1, 1)},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
