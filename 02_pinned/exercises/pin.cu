// Exercise ex02_pin (chapter 02_pinned): pin memory you already have.
//
// Your program holds its data in an ordinary (pageable) buffer, filled long before the GPU
// needs it, and uploads it many times. Every upload from pageable memory is first copied by the
// CPU, chunk by chunk, into a pinned staging buffer the driver keeps for that. Instead of moving
// the data to memory from cudaMallocHost,
// page-lock the buffer where it is with cudaHostRegister, so that the copy engines read it
// directly, and undo it when the uploads are over (the `alloc_cost` section measures what pinning
// costs and when it pays; `flags` shows the register flags).
//
// The check (exercises/check/pin.cu) uploads 64 MiB with cudaMemcpy before and after pin(), and
// passes when
//   - after pin(), CUDA knows the buffer as pinned host memory; after unpin(), no longer,
//   - the uploads after pin() are at least 1.5x faster than before, and still deliver the data.
// Run it: cmake --build build --target ex02_pin && ./build/bin/ex02_pin
//    or:  ctest --preset exercise -R 02_pinned
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>

void pin(void* host, std::size_t bytes) {
    // TODO 1: cudaHostRegister(host, bytes, cudaHostRegisterDefault).
    (void)host;
    (void)bytes;
}

void unpin(void* host) {
    // TODO 2: cudaHostUnregister(host), before the buffer itself is freed.
    (void)host;
}
