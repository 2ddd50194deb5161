// Chapter 03: Managed memory: cudaMallocManaged, __managed__ globals, coherency, fork safety
#include "sections.hpp"

int main(int argc, char** argv) {
    const tutorial::Chapter chapter{
        "03_managed",
        "Managed memory: cudaMallocManaged, __managed__ globals, coherency, fork safety",
        {
            {"properties", "which kind of unified-memory system this is", run_properties},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
