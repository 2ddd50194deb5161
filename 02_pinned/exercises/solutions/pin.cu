// Exercise ex02_pin (chapter 02_pinned), the course's solution: cudaHostRegister page-locks the
// buffer where it is; cudaHostUnregister gives it back to the operating system's paging. The task
// is in ../pin.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>

void pin(void* host, std::size_t bytes) {
    // Default flags: pinned and, with unified addressing, mapped for kernels too.
    CUDA_CHECK(cudaHostRegister(host, bytes, cudaHostRegisterDefault));
}

void unpin(void* host) {
    CUDA_CHECK(cudaHostUnregister(host));
}
