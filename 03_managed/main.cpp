// Chapter 03: managed memory.
#include "common/cli.hpp"
#include "sections.hpp"

namespace {

// first_touch allocates --size of managed memory three times over; keep it to a few GiB.
std::string check_size(const tutorial::Options& options) {
    return tutorial::check_size_limits(options, 1, std::size_t{4} << 30);
}

}  // namespace

int main(int argc, char** argv) {
    using tutorial::Section;
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
                    run_first_touch, true, check_size},
            Section{"concurrency", "CPU access while kernels run; logical GPU activity",
                    run_concurrency},
            Section{"thrash", "CPU and GPU writing the same page in turns", run_thrash},
            Section{"memcpy_memset", "cudaMemcpy under every kind, cudaMemset, on managed memory",
                    run_memcpy_memset},
            Section{"system_allocator", "kernels on malloc, stack and global memory (fault)",
                    run_system_allocator},
            Section{"fork", "fork() after CUDA, and the safe patterns (fault)", run_fork},
        },
        {
            {"touch_during_kernel", child_touch_during_kernel},
            {"managed_copies", child_managed_copies},
            {"system_memory", child_system_memory},
            {"fork_after_init", child_fork_after_init},
            {"fork_before_init", child_fork_before_init},
            {"use_cuda", child_use_cuda},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
