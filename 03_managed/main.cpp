// Chapter 03: managed memory.
#include "common/cli.hpp"
#include "sections.hpp"

int main(int argc, char** argv) {
    using tutorial::GiB;
    using tutorial::MiB;
    using tutorial::Section;
    using tutorial::Takes;
    const tutorial::Chapter chapter{
        "03_managed",
        "Managed memory: cudaMallocManaged, __managed__ globals, coherency, fork safety",
        {
            Section{"aplusb", "a + b three ways: explicit copy, cudaMallocManaged, __managed__",
                    run_aplusb},
            Section{"printme", "the host writes a string, a kernel prints it", run_printme},
            Section{"managed_globals", "__device__ __managed__ variables from both sides",
                    run_managed_globals},
            Section{"properties", "which kind of unified-memory system this is", run_properties},
            Section{"first_touch", "managed memory takes device memory only when touched",
                    // Three allocations of --size at once: keep it to a few GiB. At least
                    // 64 MiB: device memory use moves in 2 MiB steps, and the claims need
                    // "nothing" (under 1/8 of the size) to be told from one page.
                    run_first_touch, Takes{}.size(1, 4 * GiB, 64 * MiB)},
            Section{"concurrency", "CPU access while kernels run; logical GPU activity",
                    run_concurrency},
            // the first 20 rounds are reported on their own, and at least one more after them
            Section{"thrash", "CPU and GPU writing the same page in turns", run_thrash,
                    Takes{}.iters(21)},
            Section{"memcpy_memset", "cudaMemcpy under every kind, cudaMemset, on managed memory",
                    run_memcpy_memset},
            Section{"system_allocator", "kernels on malloc, stack and global memory (fault)",
                    run_system_allocator},
            Section{"fork", "fork() after CUDA, and the safe patterns (fault)", run_fork},
        },
        {
            {"touch_managed_variable", child_touch_managed_variable},
            {"touch_during_kernel", child_touch_during_kernel},
            {"managed_copies", child_managed_copies},
            {"system_memory", child_system_memory},
            {"fork_after_init", child_fork_after_init},
            {"fork_before_init", child_fork_before_init},
            {"use_cuda", child_use_cuda},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
