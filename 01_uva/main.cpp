// Chapter 01: unified virtual addressing (UVA).
#include "sections.hpp"

int main(int argc, char** argv) {
    const tutorial::Chapter chapter{
        "01_uva",
        "Unified virtual addressing: one address space for host and device",
        {
            {"attributes", "cudaPointerGetAttributes on every kind of pointer", run_attributes},
            {"memcpy_default", "cudaMemcpyDefault between every pair of memory kinds",
             run_memcpy_default},
            {"host_pointer_in_kernel", "a kernel using a pinned host pointer, and its cost",
             run_host_pointer_in_kernel},
            {"threads", "a second host thread uses the main thread's buffer and event",
             run_threads},
            {"other_process", "a device pointer sent to another process fails there (fault)",
             run_other_process},
        },
        {
            {"wrong_kind", child_wrong_kind},
            {"use_foreign_pointer", child_use_foreign_pointer},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
