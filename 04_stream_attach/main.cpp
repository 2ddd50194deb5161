// Chapter 04: attaching managed memory to streams.
#include "common/cli.hpp"
#include "sections.hpp"

int main(int argc, char** argv) {
    using tutorial::Takes;
    const tutorial::Chapter chapter{
        "04_stream_attach",
        "Attaching managed memory to streams: cudaStreamAttachMemAsync, cudaMemAttachHost",
        {
            {"properties", "the device attributes stream attach depends on", run_properties},
            {"attach_host", "y attached to the host: the CPU writes it during a kernel",
             run_attach_host},
            {"attach_wrong_variable", "x attached, y touched; the attach rules (fault if cMA=0)",
             run_attach_wrong_variable},
            {"threads", "run_task in several host threads; the legacy NULL stream's cost",
             run_threads, Takes{}.iters()},
            {"modular", "cudaMemAttachHost at allocation; stream destruction; re-attach",
             run_modular},
            {"host_callback",
             "the CPU on managed data in a stream callback; a callback as a signal",
             run_host_callback},
        },
        {
            {"attach_host", child_attach_host},
            {"wrong_variable", child_wrong_variable},
            {"attach_rules", child_attach_rules},
            {"attach_pending", child_attach_pending},
            {"construct_global", child_construct_global},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
