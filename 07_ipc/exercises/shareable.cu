// Exercise ex07_shareable (chapter 07_ipc): memory that legacy IPC can export.
//
// Not every allocation can be handed to another process with cudaIpcGetMemHandle: the legacy IPC
// calls export only memory from cudaMalloc. Memory from cudaMallocAsync's default pool, from
// cudaMallocManaged or from cudaMallocHost is refused (the `which_memory` section tries every
// kind against every way of sharing). allocate_shareable() below uses the stream-ordered
// allocator, fast but not exportable this way. Change both functions so that the buffer can be
// shared; the check does the exporting.
//
// The check (exercises/check/shareable.cu) fills the buffer, exports it with cudaIpcGetMemHandle,
// and passes when
//   - the export succeeds,
//   - a worker process that opens the handle reads the values the owner wrote.
// Run it: cmake --build build --target ex07_shareable && ./build/bin/ex07_shareable
//    or:  ctest --preset exercise -R 07_ipc
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>

void* allocate_shareable(std::size_t bytes) {
    void* buffer = nullptr;
    // TODO 1: allocate with the one call whose memory cudaIpcGetMemHandle accepts.
    CUDA_CHECK(cudaMallocAsync(&buffer, bytes, 0));
    CUDA_CHECK(cudaStreamSynchronize(0));
    return buffer;
}

void free_shareable(void* buffer) {
    // TODO 2: the free call that matches the new allocation.
    CUDA_CHECK(cudaFreeAsync(buffer, 0));
    CUDA_CHECK(cudaStreamSynchronize(0));
}
