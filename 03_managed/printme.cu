// Section printme: the Unified Memory appendix's smallest example (N.2.1.1): the CPU writes a
// string into managed memory and a kernel prints it, with no copy in between. Alone:
//   nvcc -std=c++17 -I. 03_managed/printme.cu common/standalone.cu -o build/printme
//   (or in 03_managed/: nvcc -std=c++17 -I.. printme.cu ../common/standalone.cu
//       -o ../build/printme)  (on the same line)
#include "common/check.hpp"

#include <cstdio>
#include <cstring>

namespace {

__global__ void printme(const char* str) {
    printf("%s", str);  // its output
}

// The appendix's main: 100 bytes of managed memory, written straight by the CPU (no staging
// buffer, no copy call), passed to a kernel as they are. What the walkthrough finds is what the
// kernel prints: device printf output is written out when the host synchronizes.
void walkthrough(const char* message) {
    char* s = nullptr;
    CUDA_CHECK(cudaMallocManaged(&s, 100));
    std::strncpy(s, message, 99);
    s[99] = '\0';  // strncpy stops at 99 bytes; the memory is not cleared
    printme<<<1, 1>>>(s);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(s));
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    walkthrough("Hello Unified Memory\n");
    return 0;
}
#endif
