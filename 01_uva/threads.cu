// Section threads: device pointers, streams and events belong to the process, not to the host
// thread that made them; the current device belongs to each host thread. (checks/threads.cu
// runs it, prints what each thread saw and judges it.)
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <thread>

namespace {

constexpr std::uint32_t seed = 42;

// Step 1. A worker thread uses a buffer and an event the main thread made: both belong to the
// process. Its current device does not: every new host thread starts on device 0, so it sets its
// own. Returns the current device the thread started with.
int worker(int device, std::uint32_t* buffer, std::size_t count, cudaEvent_t done) {
    int before = -1;
    CUDA_CHECK(cudaGetDevice(&before));
    CUDA_CHECK(cudaSetDevice(device));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    fill_on_device_async(buffer, count, seed, stream);  // a kernel writes the main thread's buffer
    CUDA_CHECK(cudaEventRecord(done, stream));          // and records the main thread's event
    CUDA_CHECK(cudaStreamDestroy(stream));  // legal before the kernel ends: it still finishes
    return before;
}

// Step 2. The main thread makes the buffer and the event, starts the worker, and waits on the
// event the worker recorded.
struct Shared {
    void* buffer;           // the main thread's buffer (freed by now)
    int main_device;        // the main thread's current device while the worker started
    int worker_started_on;  // the worker's current device before it set one
    std::size_t wrong;      // values the worker's kernel did not write right
};

Shared share_with_a_thread(int device, std::size_t count) {
    std::uint32_t* buffer = nullptr;
    cudaEvent_t done = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer, count * sizeof *buffer));
    CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    // To tell a per-thread current device from a process-wide one, the main thread stands on a
    // device other than 0 while the worker starts: possible only with a second GPU.
    const int main_device = device != 0 || tutorial::device_count() < 2 ? device : 1;
    CUDA_CHECK(cudaSetDevice(main_device));
    int before = -1;
    std::thread thread([&] { before = worker(device, buffer, count, done); });
    thread.join();  // the event is recorded once the worker returns; its kernel may still run
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaEventSynchronize(done));  // the event another thread recorded
    const std::size_t wrong = mismatches_on_device(buffer, count, seed);
    CUDA_CHECK(cudaEventDestroy(done));
    CUDA_CHECK(cudaFree(buffer));
    return {buffer, main_device, before, wrong};
}

}  // namespace
