// Chapter 02: pageable vs page-locked (pinned) host memory.
#include "common/cli.hpp"
#include "sections.hpp"

int main(int argc, char** argv) {
    using tutorial::GiB;
    using tutorial::KiB;
    using tutorial::MiB;
    using tutorial::Section;
    using tutorial::Takes;
    // Host buffers that are pinned and copied whole: a whole number of 4 KiB pages, and no more
    // than a few GiB of this machine's memory.
    const Takes pinned_size = Takes{}.size(4 * KiB, 4 * GiB).iters();
    const tutorial::Chapter chapter{
        "02_pinned",
        "Pageable vs page-locked (pinned) host memory: flags, bandwidth, overlap",
        {
            Section{"properties", "the device attributes pinned memory depends on", run_properties},
            Section{"basics", "device, pageable and pinned memory, a value through all three",
                    run_basics},
            Section{"context", "which call creates the primary context (in a fresh process)",
                    run_context},
            Section{"error_checks", "the tutorial's checkRuntime next to CUDA_CHECK, one failure",
                    run_error_checks},
            Section{"bandwidth", "copy GB/s from pageable, pinned, write-combined, registered",
                    run_bandwidth, pinned_size},
            Section{"flags", "every cudaHostAlloc / cudaHostRegister flag, read back", run_flags},
            Section{"write_combined", "CPU read and write speed of write-combined memory",
                    run_write_combined, pinned_size},
            Section{"async", "when cudaMemcpyAsync returns; overlap over K streams", run_async,
                    pinned_size},
            Section{"alloc_cost", "what pinning costs, and when it pays off", run_alloc_cost,
                    pinned_size},
            Section{"batch_copies", "thousands of 4 KiB copies: a loop vs cudaMemcpyBatchAsync",
                    run_batch_copies, Takes{}.size(4 * KiB, 256 * MiB).holds(2, 2)},
            Section{"pinning_at_scale",
                    "pinning GiBs: cudaMallocHost vs touch + register, huge pages",
                    run_pinning_at_scale, Takes{}.size(2 * MiB, 16 * GiB).holds(1, 1).iters()},
            Section{"misuse", "wrong free calls, pinning twice, read-only writes (fault)",
                    run_misuse},
        },
        {
            {"context_steps", child_context_steps},
            {"context_without_set_device", child_context_without_set_device},
            {"tutorial_program", child_tutorial_program},
            {"mismatched_calls", child_mismatched_calls},
            {"free_pinned", child_free_pinned},
            {"pin_under_memlock", child_pin_under_memlock},
            {"write_read_only", child_write_read_only},
            {"batch_misuse", child_batch_misuse},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
