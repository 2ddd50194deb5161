// Chapter 07: Sharing GPU memory and events between processes
#include "sections.hpp"

int main(int argc, char** argv) {
    const tutorial::Chapter chapter{
        "07_ipc",
        "Sharing GPU memory and events between processes",
        {
            {"properties", "the device attributes inter-process sharing depends on",
             run_properties},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
