// Chapter 02: Pageable vs page-locked (pinned) host memory: flags, bandwidth, overlap
#include "sections.hpp"

int main(int argc, char** argv) {
    const tutorial::Chapter chapter{
        "02_pinned",
        "Pageable vs page-locked (pinned) host memory: flags, bandwidth, overlap",
        {
            {"properties", "the device attributes pinned memory depends on", run_properties},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
