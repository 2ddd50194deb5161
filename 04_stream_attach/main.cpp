// Chapter 04: Attaching managed memory to streams: cudaStreamAttachMemAsync, cudaMemAttachHost
#include "sections.hpp"

int main(int argc, char** argv) {
    const tutorial::Chapter chapter{
        "04_stream_attach",
        "Attaching managed memory to streams: cudaStreamAttachMemAsync, cudaMemAttachHost",
        {
            {"properties", "the device attributes stream attach depends on", run_properties},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
