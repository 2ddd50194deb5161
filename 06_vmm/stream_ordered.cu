// Section stream_ordered: cudaMallocAsync and cudaFreeAsync, which allocate and free in stream
// order from a pool of VMM memory: what waits, what is reused, what another stream must wait for.
// Built alone, from the course's folder (mkdir -p build first), then ./build/stream_ordered:
//   nvcc -std=c++17 -I. 06_vmm/stream_ordered.cu common/standalone.cu -o build/stream_ordered
//   (or in 06_vmm/: nvcc -std=c++17 -I.. stream_ordered.cu ../common/standalone.cu
//       -o ../build/stream_ordered)  (on the same line)
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>

namespace {

constexpr std::uint32_t old_seed = 91;
constexpr std::uint32_t new_seed = 92;

struct Reuse {
    void* first = nullptr;   // freed on the stream...
    void* second = nullptr;  // ...then the stream's next allocation of the same size
    std::size_t wrong = 0;   // values of the second that were not what the stream wrote into it
};

// Steps 3 and 4, whose code follows the walkthrough: a block freed and allocated again on one
// stream, and a block one stream writes and another copies, with or without an event between.
Reuse reuse_on_one_stream(std::size_t bytes);
std::size_t copy_from_other_stream(std::size_t bytes, bool wait_for_event);

// What the walkthrough found.
struct Found {
    std::size_t count = 0;  // values in each block
    Reuse reuse;            // step 3
    std::size_t stale = 0;  // step 4: values the copy got that were not the new ones...
    std::size_t wrong = 0;  // ...without the event, and with it
};

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step free_waits{"a cudaMalloc block freed while another stream is busy"};
constexpr tutorial::Step free_async{"a cudaMallocAsync block freed in its stream, another busy"};

// Each free is called while a kernel of `busy_ms` runs on another stream.
Found walkthrough(std::size_t bytes, double busy_ms) {
    Found found;
    found.count = bytes / sizeof(std::uint32_t);
    cudaStream_t other = nullptr, mine = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));

    // 1. cudaFree of cudaMalloc memory while a kernel runs on an unrelated stream: for memory
    //    that is not the stream-ordered allocator's, its entry says it may synchronize.
    void* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, bytes));
    tutorial::launch_busy(other, busy_ms);
    {
        const tutorial::During during(free_waits);
        CUDA_CHECK(cudaFree(p));
    }

    // 2. cudaFreeAsync of a cudaMallocAsync block, the same kernel running again: the free is
    //    queued on `mine`, which has nothing to wait for.
    CUDA_CHECK(cudaMallocAsync(&p, bytes, mine));
    CUDA_CHECK(cudaStreamSynchronize(mine));
    tutorial::launch_busy(other, busy_ms);
    {
        const tutorial::During during(free_async);
        CUDA_CHECK(cudaFreeAsync(p, mine));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaStreamDestroy(other));
    CUDA_CHECK(cudaStreamDestroy(mine));

    // 3. On one stream, stream order alone makes a freed block safe to hand out again.
    found.reuse = reuse_on_one_stream(bytes);

    // 4. Across streams only an event says when: the copy without it, then with it.
    found.stale = copy_from_other_stream(bytes, false);
    found.wrong = copy_from_other_stream(bytes, true);
    return found;
}

// Allocate, fill, free, allocate again: all queued on one stream, no synchronization between.
Reuse reuse_on_one_stream(std::size_t bytes) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    Reuse r;
    std::uint32_t* a = nullptr;
    std::uint32_t* b = nullptr;
    CUDA_CHECK(cudaMallocAsync(&a, bytes, stream));
    fill_on_device_async(a, count, old_seed, stream);
    CUDA_CHECK(cudaFreeAsync(a, stream));
    CUDA_CHECK(cudaMallocAsync(&b, bytes, stream));
    fill_on_device_async(b, count, new_seed, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    r.first = a;
    r.second = b;
    r.wrong = mismatches_on_device(b, count, new_seed);
    CUDA_CHECK(cudaFreeAsync(b, stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return r;
}

// Stream `writer` allocates a block and (after 50 ms of other work) writes it; stream
// `reader` copies it out. Without an event the copy runs at once and sees the old contents; with
// cudaStreamWaitEvent it runs after the write.
std::size_t copy_from_other_stream(std::size_t bytes, bool wait_for_event) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    cudaStream_t writer = nullptr, reader = nullptr;
    cudaEvent_t written = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&writer, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&written, cudaEventDisableTiming));
    std::uint32_t* block = nullptr;
    std::uint32_t* out = nullptr;
    CUDA_CHECK(cudaMalloc(&out, bytes));
    CUDA_CHECK(cudaMallocAsync(&block, bytes, writer));
    fill_on_device_async(block, count, old_seed, writer);  // what was there before
    CUDA_CHECK(cudaStreamSynchronize(writer));
    tutorial::launch_busy(writer, 50.0);
    fill_on_device_async(block, count, new_seed, writer);
    CUDA_CHECK(cudaEventRecord(written, writer));
    if (wait_for_event) CUDA_CHECK(cudaStreamWaitEvent(reader, written, 0));
    CUDA_CHECK(cudaMemcpyAsync(out, block, bytes, cudaMemcpyDeviceToDevice, reader));
    // Without the event the two streams are not ordered at all, so only a full synchronization
    // says that neither uses the block any more.
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFreeAsync(block, writer));
    CUDA_CHECK(cudaStreamSynchronize(writer));
    const std::size_t wrong = mismatches_on_device(out, count, new_seed);
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaEventDestroy(written));
    CUDA_CHECK(cudaStreamDestroy(writer));
    CUDA_CHECK(cudaStreamDestroy(reader));
    return wrong;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const double busy_ms = 200.0;  // the kernel on the other stream
    tutorial::StepTimes times;     // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(std::size_t{256} << 20, busy_ms);
    times.print();
    // The card's number: how long each free took to return while the other stream was busy.
    const double free_ms = times.median_host_ms(free_waits);
    const double free_async_ms = times.median_host_ms(free_async);
    std::printf(
        "a %.0f ms kernel on another stream: cudaFree returned after %.3f ms, cudaFreeAsync "
        "after %.3f ms (%.0f times shorter than the kernel)\n",
        busy_ms, free_ms, free_async_ms, busy_ms / free_async_ms);
    std::printf(
        "the stream's next allocation got %s block, %zu values wrong; another stream's "
        "copy: %zu of %zu stale without the event, %zu with it\n",
        found.reuse.first == found.reuse.second ? "the freed" : "another", found.reuse.wrong,
        found.stale, found.count, found.wrong);
    return found.reuse.wrong == 0 && found.wrong == 0 ? 0 : 1;
}
#endif
