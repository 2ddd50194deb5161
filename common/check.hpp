// Error checking for every CUDA call in the course.
//
//   CUDA_CHECK(cudaMalloc(&p, bytes));      runtime API calls (cudaError_t)
//   CU_CHECK(cuMemCreate(&h, n, &prop, 0)); driver API calls (CUresult)
//   kernel<<<grid, block>>>(...);
//   CUDA_CHECK_LAUNCH();                    was the launch itself accepted?
//   CUDA_CHECK_LAUNCH_SYNC();               ...and did the kernel run to completion?
//
// On failure each macro prints one line to stderr and ends the program with exit code 1, the file
// named relative to the course's folder (the build maps __FILE__ so: common/cmake/tutorial.cmake):
//
//   03_managed/aplusb.cu:42: cudaMalloc(&p, bytes) failed: cudaErrorMemoryAllocation (out of memory)
//
// Why exit instead of returning an error or throwing? These are teaching programs. A failed CUDA
// call means the lesson's premise no longer holds, and many CUDA errors are "sticky": after an
// illegal address, every later call in the process fails too, so there is nothing sensible left to
// run. Stopping at the first failure, with the file, line and the exact call that failed, is the
// most useful thing a sample can do. Sections that *want* to show an error call the API without
// these macros, compare the returned code with the one they expect, and run anything that can
// poison the process in a child process (see child.hpp).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

namespace tutorial {

// The one-line message the macros print, e.g.
// "file.cu:12: cudaFree(p) failed: cudaErrorInvalidValue (invalid argument)".
std::string error_line(const char* file, int line, const char* call, cudaError_t error);
std::string error_line(const char* file, int line, const char* call, CUresult error);

// Prints error_line(...) to stderr and exits with code 1. In a lesson built on its own (see
// skip_without_device) where the call failed for want of a usable device, prints the course's
// SKIP line instead and exits with 77.
[[noreturn]] void fail_cuda_call(const char* file, int line, const char* call, cudaError_t error);
[[noreturn]] void fail_cuda_call(const char* file, int line, const char* call, CUresult error);

// Set by common/standalone.cu, so that a lesson built on its own behaves as the course's programs
// do on a machine with no GPU or no driver: the first checked call that fails there prints one
// line, "SKIP: <program>: no usable CUDA device: <why>", and the program exits with 77. (The
// chapters' programs find out before any section runs, and skip the sections that need a GPU.)
extern bool skip_without_device;
// Where skip_without_device is set and there is no usable device: that SKIP line, exit 77.
// Returns where there is one.
void skip_if_no_usable_device();

}  // namespace tutorial

#define CUDA_CHECK(call)                                                             \
    do {                                                                             \
        const cudaError_t tutorial_status_ = (call);                                 \
        if (tutorial_status_ != cudaSuccess) {                                       \
            ::tutorial::fail_cuda_call(__FILE__, __LINE__, #call, tutorial_status_); \
        }                                                                            \
    } while (0)

#define CU_CHECK(call)                                                               \
    do {                                                                             \
        const CUresult tutorial_status_ = (call);                                    \
        if (tutorial_status_ != CUDA_SUCCESS) {                                      \
            ::tutorial::fail_cuda_call(__FILE__, __LINE__, #call, tutorial_status_); \
        }                                                                            \
    } while (0)

// A launch with a bad configuration (too many threads, too much shared memory) fails without
// running and reports it only through cudaGetLastError. Errors *inside* the kernel (an illegal
// address) appear later, at the next synchronizing call, which the _SYNC variant makes right away.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CUDA_CHECK_LAUNCH_SYNC()             \
    do {                                     \
        CUDA_CHECK(cudaGetLastError());      \
        CUDA_CHECK(cudaDeviceSynchronize()); \
    } while (0)
