// Checks of section printme: runs ../printme.cu on a known string, with a managed buffer for the
// kernel's copy, and compares that copy with the string byte for byte.
#include "03_managed/printme.cu"

#include "common/harness/chapter.hpp"

#include <cstdio>
#include <cstring>

tutorial::Result run_printme(tutorial::Context& ctx) {
    const char* message = "Hello Unified Memory\n";
    char* echo = nullptr;
    CUDA_CHECK(cudaMallocManaged(&echo, capacity));
    std::memset(echo, 0, capacity);
    std::printf("The host wrote the string into managed memory; the kernel prints it:\n");
    print_from_managed(message, echo);
    const bool same = std::strcmp(echo, message) == 0;
    CUDA_CHECK(cudaFree(echo));
    std::printf("\n");
    ctx.claim(tutorial::documented(
        "kernel_reads_host_write",
        "a kernel reads what the CPU wrote into managed memory, with no copy call", same,
        same ? "its echo matched byte for byte" : "its echo differed",
        "the kernel ran before the host's write reached the page",
        tutorial::Entry{"Runtime API reference: cudaMallocManaged", "CPU GPUs", "is"}));
    return ctx.verdict(same,
                       "the kernel read exactly the string the host wrote (its copy "
                       "compared byte for byte)");
}

TUTORIAL_SECTION(printme, run_printme);
