// Exercise ex04_thread_streams (chapter 04_stream_attach): host threads that do not wait for
// each other.
//
// The check runs run_tasks() in 4 host threads at once, each on its own managed buffer. The
// given version queues every kernel on the legacy default stream and waits with
// cudaDeviceSynchronize: the default stream orders each thread's kernel after every other
// thread's, and the wait is for the whole device, so the threads take turns although each kernel
// uses one block of one SM. Give each thread its own stream, attach the thread's buffer to it
// (so that, on a GPU where concurrentManagedAccess is 0, the CPU may use the buffer while other
// threads' kernels run), and wait for that stream only (the `threads` section measures the same).
//
// The check (exercises/check/thread_streams.cu) passes when
//   - every thread's CPU reads and final values are what the kernels computed,
//   - the 4 threads with run_tasks() finish at least 1.5x sooner than with run_tasks_given().
// Run it: cmake --build build --target ex04_thread_streams && ./build/bin/ex04_thread_streams
//    or:  ctest --preset exercise -R 04_stream_attach
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// One block: a task that keeps one SM busy for a while and leaves the others free.
__global__ void step(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = threadIdx.x; i < count; i += blockDim.x) {
        std::uint32_t x = data[i];
        for (int r = 0; r < 64; ++r) x = x * 1664525u + 1013904223u;
        data[i] = x;
    }
}

// Given: `tasks` kernels on the legacy default stream; after each, the CPU reads data[0].
std::uint64_t run_tasks_given(std::uint32_t* data, std::size_t count, int tasks) {
    std::uint64_t seen = 0;
    for (int t = 0; t < tasks; ++t) {
        step<<<1, 256>>>(data, count);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        seen += data[0];
    }
    return seen;
}

// Yours: the same work, without waiting for the other threads.
std::uint64_t run_tasks(std::uint32_t* data, std::size_t count, int tasks) {
    // TODO 1: create a stream of this thread's own (cudaStreamCreateWithFlags with
    //         cudaStreamNonBlocking, so that it never waits for the legacy default stream).
    // TODO 2: attach the buffer to it: cudaStreamAttachMemAsync(stream, data, 0,
    //         cudaMemAttachSingle), then wait for the attach (cudaStreamSynchronize).
    // TODO 3: launch step on the stream (4th launch parameter), wait with
    //         cudaStreamSynchronize(stream) instead of cudaDeviceSynchronize.
    // TODO 4: at the end, attach the buffer back with cudaMemAttachGlobal (the other threads'
    //         code may use it next), wait, and cudaStreamDestroy the stream.
    return run_tasks_given(data, count, tasks);
}
