// Chapter 02: pageable vs page-locked (pinned) host memory.
#include "common/harness/chapter.hpp"

int main(int argc, char** argv) {
    using tutorial::GiB;
    using tutorial::KiB;
    using tutorial::MiB;
    using tutorial::Section;
    using tutorial::Takes;
    // Host buffers that are pinned and copied whole: a whole number of 4 KiB pages, at most
    // 1 GiB, where the largest run in --quick mode still ends in about a minute (async, which
    // allocates and checks seven buffers in every round, at most 256 MiB).
    const Takes pinned_size = Takes{}.size(4 * KiB, 1 * GiB).iters();
    const tutorial::Chapter chapter{
        "02_pinned",
        "Pageable vs page-locked (pinned) host memory: flags, bandwidth, overlap",
        {
            Section{"properties", "the device attributes pinned memory depends on"},
            Section{"basics", "device, pageable and pinned memory, a value through all three"},
            Section{"context", "which call creates the primary context (in a fresh process)"},
            Section{"hidden_memory", "the memory a context and a module take, unasked"},
            Section{"error_checks", "the tutorial's checkRuntime next to CUDA_CHECK, one failure"},
            Section{"bandwidth", "copy GB/s from pageable, pinned, write-combined, registered",
                    pinned_size},
            Section{"flags", "every cudaHostAlloc / cudaHostRegister flag, read back"},
            Section{"write_combined", "CPU read and write speed of write-combined memory",
                    pinned_size},
            Section{"async", "when cudaMemcpyAsync returns; overlap over K streams",
                    Takes{}.size(4 * KiB, 256 * MiB).iters()},
            Section{"alloc_cost", "what pinning costs, and when it pays off", pinned_size},
            Section{"batch_copies", "thousands of 4 KiB copies: a loop vs cudaMemcpyBatchAsync",
                    Takes{}.size(4 * KiB, 256 * MiB).holds(2, 2)},
            Section{"pinning_at_scale",
                    "pinning GiBs: cudaMallocHost vs touch + register, huge pages",
                    Takes{}.size(2 * MiB, 4 * GiB).holds(1, 1).iters(1, 20)},
            Section{"pinned_pool", "pinned host memory from a pool: cudaMallocFromPoolAsync",
                    Takes{}.size(4 * KiB, 1 * GiB).holds(1, 2)},
            Section{"mapped_file", "a file mapped read-only, pinned: which flags, what it buys",
                    Takes{}.size(4, 2 * GiB).holds(1, 4)},
            Section{"misuse", "wrong free calls, pinning twice, read-only writes (fault)"},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
