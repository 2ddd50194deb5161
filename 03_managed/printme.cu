// Section printme: the Unified Memory appendix's smallest example (N.2.1.1): the CPU writes a
// string into managed memory and a kernel prints it. (checks/printme.cu runs it and compares the
// kernel's copy of the string with what the host wrote.)
#include "common/check.hpp"

#include <cstdio>
#include <cstring>

namespace {

constexpr int capacity = 100;

__global__ void printme(const char* str, char* echo, int capacity) {
    printf("%s", str);  // its output
    // A copy of what the kernel read, for the check.
    for (int i = 0; i < capacity; ++i) {
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

}  // namespace
