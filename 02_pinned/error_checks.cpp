// Section error_checks: the pageable/pinned/device memory tutorial's checkRuntime macro next to
// the course's CUDA_CHECK, on its program with one failing cudaMalloc (checks/error_checks.cpp).
#include "common/check.hpp"

#include <algorithm>
#include <cstdio>

namespace {

// Step 1. The tutorial's check: report a failed call, then return false and leave the rest to
// the caller. Its program never looks at that value, so it carries on after every failure.
#define checkRuntime(op) check_runtime_report((op), #op, __FILE__, __LINE__)

bool check_runtime_report(cudaError_t code, const char* op, const char* file, int line) {
    if (code == cudaSuccess) return true;
    std::printf("runtime error %s:%d  %s failed.\n  code = %s, message = %s\n",  // its output
                file, line, op, cudaGetErrorName(code), cudaGetErrorString(code));
    return false;
}

// Step 2. The tutorial's program (a value carried pageable -> device -> pinned), with its
// cudaMalloc asking for more memory than the device has: one failing call, checked by either
// macro.
template <bool with_check_runtime>
int tutorial_program(int device_id, std::size_t too_many_bytes) {
#define CHECK(op)                           \
    do {                                    \
        if constexpr (with_check_runtime) { \
            checkRuntime(op);               \
        } else {                            \
            CUDA_CHECK(op);                 \
        }                                   \
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
