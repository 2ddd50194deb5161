// Section `printme`: the host writes a string into managed memory and a kernel prints it. The
// kernel also copies the string back, so the section can check what the GPU actually read.
#include "common/check.hpp"
#include "common/harness/chapter.hpp"

#include <cstdio>
#include <cstring>

namespace {

constexpr int capacity = 100;

// lesson:begin
__global__ void printme(const char* str, char* echo, int capacity) {
    printf("%s", str);  // its output
    for (int i = 0; i < capacity; ++i) {  // a copy of what the kernel read, for the check
        echo[i] = str[i];
        if (str[i] == '\0') break;
    }
}

// The CPU writes straight into managed memory (no staging buffer, no copy call) and a kernel
// prints it. Device printf output is written out when the host synchronizes.
void print_from_managed(const char* message, char* echo) {
    char* s = nullptr;
    CUDA_CHECK(cudaMallocManaged(&s, capacity));
    std::strncpy(s, message, capacity - 1);
    s[capacity - 1] = '\0';
    printme<<<1, 1>>>(s, echo, capacity);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(s));
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

}  // namespace

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
        "a kernel reads what the CPU wrote into managed memory, with no copy call", same,
        same ? "its echo matched byte for byte" : "its echo differed",
        "the kernel ran before the host's write reached the page",
        "Programming Guide, N.2.1.1 Explicit Allocation Using cudaMallocManaged()"));
    return ctx.verdict(same,
                       "the kernel read exactly the string the host wrote (its copy "
                       "compared byte for byte)");
}

TUTORIAL_SECTION(printme, run_printme);
