// Chapter 01: unified virtual addressing (UVA).
#include "common/harness/chapter.hpp"

int main(int argc, char** argv) {
    using tutorial::GiB;
    using tutorial::Section;
    using tutorial::Takes;
    // The sizes are read 16 bytes at a time. memcpy_default copies every pair of four kinds of
    // memory, filling and checking each on the CPU or the GPU: at most 2 GiB, so that its
    // largest size still finishes in about a minute.
    const Takes size = Takes{}.size(16, 4 * GiB);
    const Takes copy_size = Takes{}.size(16, 2 * GiB);
    const tutorial::Chapter chapter{
        "01_uva",
        "Unified virtual addressing: one address space for host and device",
        {
            Section{"attributes", "cudaPointerGetAttributes on every kind of pointer"},
            // One buffer of each kind to copy from and one to copy to, all at once: device and
            // managed memory on the GPU, pageable and pinned memory on the host.
            Section{"memcpy_default", "cudaMemcpyDefault between every pair of memory kinds",
                    Takes{copy_size}.holds(4, 4)},
            Section{"host_pointer_in_kernel", "a kernel using a pinned host pointer, and its cost",
                    Takes{size}.holds(1, 1).iters()},
            Section{"threads", "a second host thread uses the main thread's buffer and event"},
            Section{"other_process",
                    "a device pointer sent to another process fails there (fault)"},
            Section{"peer_access", "one GPU's kernels using another GPU's memory (2+ GPUs)"},
            Section{"peer_bandwidth", "copy GB/s and latency for every pair of GPUs (2+ GPUs)"},
            Section{"portable_pinned", "one cudaHostAllocPortable buffer used by every GPU (2+)"},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
