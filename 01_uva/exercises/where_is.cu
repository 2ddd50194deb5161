// Exercise ex01_where_is (chapter 01_uva): tell, from a pointer alone, where its memory lives.
//
// With unified virtual addressing every allocation, on the host or on any GPU, has its own range
// of one address space, so CUDA can look a pointer up. Write where_is() so that it names the kind
// of memory a pointer points into, the way the `attributes` section of this chapter prints it:
//   "device"    memory from cudaMalloc
//   "pinned"    host memory CUDA page-locked: cudaMallocHost, cudaHostAlloc, cudaHostRegister
//   "managed"   memory from cudaMallocManaged
//   "pageable"  any other host memory: malloc, new, the stack
//
// The check (exercises/check/where_is.cu) asks about 10 pointers, some at the start of their
// allocation and some inside it, and passes when every answer is right.
// Run it: cmake --build build --target ex01_where_is && ./build/bin/ex01_where_is
//    or:  ctest --preset exercise -R 01_uva
#include "common/check.hpp"

#include <cuda_runtime.h>

const char* where_is(const void* pointer) {
    // TODO 1: ask CUDA about the pointer: cudaPointerGetAttributes(&attributes, pointer), with
    //         attributes a cudaPointerAttributes.
    // TODO 2: switch on attributes.type: cudaMemoryTypeDevice, cudaMemoryTypeHost,
    //         cudaMemoryTypeManaged, cudaMemoryTypeUnregistered.
    (void)pointer;
    return "pageable";
}
