// Exercise ex06_free_after_read (chapter 06_vmm), the course's solution: the reader's stream
// records an event after its copy, and the owner's stream waits for it before the free, so the
// block goes back to the pool only once it has been read. The task is in ../free_after_read.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

void hand_back(void* block, cudaStream_t owner, cudaStream_t reader, cudaEvent_t read) {
    // The event marks the end of everything queued in `reader` so far: its copy of the block.
    CUDA_CHECK(cudaEventRecord(read, reader));
    // The owner's later work, the free first, starts only once the event has completed. The
    // owner's next allocation, queued after the free, may then take this very block, in order.
    CUDA_CHECK(cudaStreamWaitEvent(owner, read, 0));
    CUDA_CHECK(cudaFreeAsync(block, owner));
    // The other fix, in place of the three calls above: cudaFreeAsync(block, reader), queued
    // after the copy in the stream that reads. hand_back then adds no dependency to the
    // owner's stream, and no allocation can have the block before that free has run.
}
