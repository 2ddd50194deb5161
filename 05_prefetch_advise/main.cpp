// Chapter 05: Prefetching and advising managed memory: cudaMemPrefetchAsync, cudaMemAdvise
#include "sections.hpp"

int main(int argc, char** argv) {
    const tutorial::Chapter chapter{
        "05_prefetch_advise",
        "Prefetching and advising managed memory: cudaMemPrefetchAsync, cudaMemAdvise",
        {
            {"properties", "the device attributes prefetch and advice depend on", run_properties},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
