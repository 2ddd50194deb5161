// Chapter 04: attaching managed memory to streams.
#include "common/harness/chapter.hpp"

int main(int argc, char** argv) {
    using tutorial::Section;
    using tutorial::Takes;
    const tutorial::Chapter chapter{
        "04_stream_attach",
        "Attaching managed memory to streams: cudaStreamAttachMemAsync, cudaMemAttachHost",
        {
            Section{"properties", "the device attributes stream attach depends on"},
            Section{"attach_host", "y attached to the host: the CPU writes it during a kernel"},
            Section{"attach_wrong_variable",
                    "x attached, y touched; the attach rules (fault if cMA=0)"},
            Section{"threads", "run_task in several host threads; the legacy NULL stream's cost",
                    Takes{}.iters()},
            Section{"modular", "cudaMemAttachHost at allocation; stream destruction; re-attach"},
            Section{"host_callback",
                    "the CPU on managed data in a stream callback; a callback as a signal"},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
