// Chapter 03: managed memory.
#include "common/harness/chapter.hpp"

int main(int argc, char** argv) {
    using tutorial::GiB;
    using tutorial::MiB;
    using tutorial::Section;
    using tutorial::Takes;
    const tutorial::Chapter chapter{
        "03_managed",
        "Managed memory: cudaMallocManaged, __managed__ globals, coherency, fork safety",
        {
            Section{"aplusb", "a + b three ways: explicit copy, cudaMallocManaged, __managed__"},
            Section{"printme", "the host writes a string, a kernel prints it"},
            Section{"managed_globals", "__device__ __managed__ variables from both sides"},
            Section{"properties", "which kind of unified-memory system this is"},
            Section{"first_touch", "managed memory takes device memory only when touched",
                    // Three allocations of --size at once: keep it to a few GiB. At least
                    // 64 MiB: device memory use moves in 2 MiB steps, and the claims need
                    // "nothing" (under 1/8 of the size) to be told from one page.
                    Takes{}.size(1, 4 * GiB, 64 * MiB)},
            Section{"concurrency", "CPU access while kernels run; logical GPU activity"},
            // the first 20 rounds are reported on their own, and at least one more after them
            Section{"thrash", "CPU and GPU writing the same page in turns",
                    Takes{}.iters(21, 10000)},
            Section{"memcpy_memset", "cudaMemcpy under every kind, cudaMemset, on managed memory"},
            Section{"managed_pool", "managed memory from a pool: the default managed pool"},
            Section{"system_allocator", "kernels on malloc, stack and global memory (fault)"},
            Section{"fork", "fork() after CUDA, and the safe patterns (fault)"},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
