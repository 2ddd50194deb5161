// Section `printme`: the host writes a string into managed memory and a kernel prints it. The
// kernel also copies the string back, so the section can check what the GPU actually read.
#include "common/check.hpp"
#include "sections.hpp"

#include <cstdio>
#include <cstring>

namespace {

__global__ void printme(const char* str, char* echo, int capacity) {
    printf("%s", str);
    for (int i = 0; i < capacity; ++i) {
        echo[i] = str[i];
        if (str[i] == '\0') break;
    }
}

}  // namespace

tutorial::Result run_printme(tutorial::Context& ctx) {
    constexpr int capacity = 100;
    const char* message = "Hello Unified Memory\n";
    char* s = nullptr;
    char* echo = nullptr;
    CUDA_CHECK(cudaMallocManaged(&s, capacity));
    CUDA_CHECK(cudaMallocManaged(&echo, capacity));
    std::memset(echo, 0, capacity);
    // The CPU writes straight into managed memory: no staging buffer, no copy call.
    std::strncpy(s, message, capacity - 1);
    s[capacity - 1] = '\0';
    std::printf("The host wrote the string into managed memory; the kernel prints it:\n");
    printme<<<1, 1>>>(s, echo, capacity);
    CUDA_CHECK_LAUNCH();
    // Device printf output is collected on the GPU and written out when the host synchronizes.
    CUDA_CHECK(cudaDeviceSynchronize());
    const bool same = std::strcmp(echo, message) == 0;
    CUDA_CHECK(cudaFree(s));
    CUDA_CHECK(cudaFree(echo));
    std::printf("\n");
    ctx.claim(tutorial::observed(
        "a kernel reads what the CPU wrote into managed memory, with no copy call", same,
        same ? "its echo matched byte for byte" : "its echo differed",
        "the kernel ran before the host's write reached the page"));
    return ctx.verdict(same,
                       "the kernel read exactly the string the host wrote (its copy "
                       "compared byte for byte)");
}
