// Exercise ex01_where_is (chapter 01_uva), the course's solution: cudaPointerGetAttributes looks
// the address up in the unified address space; its `type` names the kind of memory. The task is
// in ../where_is.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

const char* where_is(const void* pointer) {
    cudaPointerAttributes attributes{};
    // Since CUDA 11 a pointer CUDA does not know is not an error: its type is Unregistered.
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    switch (attributes.type) {
        case cudaMemoryTypeDevice: return "device";
        case cudaMemoryTypeHost: return "pinned";
        case cudaMemoryTypeManaged: return "managed";
        case cudaMemoryTypeUnregistered: break;
    }
    return "pageable";
}
