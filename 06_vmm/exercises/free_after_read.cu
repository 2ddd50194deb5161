// Exercise ex06_free_after_read (chapter 06_vmm): give a block back only after the other stream
// has read it.
//
// Two streams share a block from a pool. The owner's stream allocated it and filled it; the
// reader's stream has queued a copy of it, behind other work, so the copy runs later. Now the
// owner is done with the block and calls hand_back(), then allocates the same size again and
// writes into it. As written below, hand_back() frees the block in the owner's stream, and
// nothing orders that free after the reader's copy: the pool may give the block to the owner's
// next allocation at once, and the reader then copies out the owner's new values, with no error
// from any call (the `wrong_stream_free` section shows it). Rewrite hand_back() so that the free
// runs only after the reader's copy, in stream order. (The host need not wait for the reader:
// the check prints how long your hand_back() took, but does not judge it.)
//
// The check (exercises/check/free_after_read.cu) sets up the race three times, in a pool of its
// own that keeps what it is given: the reader's stream is busy for 50 ms before its copy of the
// 64 MiB block (16 MiB with --quick), and the owner allocates and fills again right after your
// hand_back(). It passes when
//   - every value the reader copied out is one the owner wrote into the block before
//     hand_back(),
//   - and the block went back to the pool: once both streams are done and the check has freed
//     the owner's next block, nothing of the pool is in use.
// It also prints how long your hand_back() took: a few microseconds where nothing waits on the
// host.
// Run it: cmake --build build --target ex06_free_after_read && ./build/bin/ex06_free_after_read
//    or:  ctest --preset exercise -R 06_vmm
#include "common/check.hpp"

#include <cuda_runtime.h>

// Yours: called right after the reader's stream has queued its copy of `block` (the last thing
// in `reader`). `read` is an event of yours (cudaEventDisableTiming); nothing has recorded it.
void hand_back(void* block, cudaStream_t owner, cudaStream_t reader, cudaEvent_t read) {
    // TODO 1: mark the point in the reader's stream after its copy: cudaEventRecord(read, reader).
    // TODO 2: make the owner's stream wait for that point before what it queues next:
    //         cudaStreamWaitEvent(owner, read, 0), then the cudaFreeAsync below.
    //         (The other way, instead of TODO 1 and 2: queue the free in the stream that reads,
    //         cudaFreeAsync(block, reader), after its copy.)
    (void)reader;
    (void)read;
    CUDA_CHECK(cudaFreeAsync(block, owner));  // nothing orders this after the reader's copy
}
