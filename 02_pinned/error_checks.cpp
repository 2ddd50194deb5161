// Section error_checks: the pageable/pinned/device memory tutorial's checkRuntime macro next to
// the course's CUDA_CHECK, on its program with one cudaMalloc that fails. Alone:
//   nvcc -std=c++17 -I. 02_pinned/error_checks.cpp common/standalone.cu -o build/error_checks
//   (or in 02_pinned/: nvcc -std=c++17 -I.. error_checks.cpp ../common/standalone.cu
//       -o ../build/error_checks)  (on the same line)
#include "common/check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace {

// The tutorial's check: report a failed call, then return false and leave the rest to the
// caller. Its program never looks at that value, so it carries on after every failure.
#define checkRuntime(op) check_runtime_report((op), #op, __FILE__, __LINE__)

bool check_runtime_report(cudaError_t code, const char* op, const char* file, int line) {
    if (code == cudaSuccess) return true;
    std::printf("runtime error %s:%d  %s failed.\n  code = %s, message = %s\n",  // its output
                file, line, op, cudaGetErrorName(code), cudaGetErrorString(code));
    return false;
}

// The tutorial's program (a value carried pageable -> device -> pinned), its cudaMalloc asking
// for more memory than the device has: one failing call, checked by checkRuntime or CUDA_CHECK.
// Both name the file and line of the call that failed: this file's, the line you read.
int walkthrough(bool with_check_runtime, int device_id, std::size_t too_many_bytes) {
#define CHECK(op)                    \
    do {                             \
        if (with_check_runtime) {    \
            checkRuntime(op);        \
        } else {                     \
            CUDA_CHECK(op);          \
        }                            \
    } while (0)
    CHECK(cudaSetDevice(device_id));
    float* memory_device = nullptr;
    CHECK(cudaMalloc(&memory_device, too_many_bytes));
    float* memory_host = new float[100];
    std::fill(memory_host, memory_host + 100, 0.0f);
    memory_host[2] = 520.25f;
    CHECK(cudaMemcpy(memory_device, memory_host, sizeof(float) * 100, cudaMemcpyHostToDevice));
    float* memory_page_locked = nullptr;
    CHECK(cudaMallocHost(&memory_page_locked, 100 * sizeof(float)));
    CHECK(
        cudaMemcpy(memory_page_locked, memory_device, sizeof(float) * 100, cudaMemcpyDeviceToHost));
    std::printf("%f\n", memory_page_locked[2]);  // its output
    CHECK(cudaFreeHost(memory_page_locked));
    delete[] memory_host;
    CHECK(cudaFree(memory_device));
    return 0;
#undef CHECK
}

}  // namespace

#ifndef TUTORIAL_CHECKS
// Runs the program checked by checkRuntime, or by CUDA_CHECK with the argument CUDA_CHECK.
int main(int argc, char** argv) {
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const bool course_way = argc > 1 && std::strcmp(argv[1], "CUDA_CHECK") == 0;
    const int code = walkthrough(!course_way, 0, 2 * total_bytes);
    std::printf("the program returns %d\n", code);
    return code;
}
#endif
