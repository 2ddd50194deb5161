// Chapter 01: unified virtual addressing (UVA).
#include "sections.hpp"

int main(int argc, char** argv) {
    const tutorial::Chapter chapter{
        "01_uva",
        "Unified virtual addressing: one address space for host and device",
        {
            {"properties", "the device attributes UVA depends on", run_properties},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
