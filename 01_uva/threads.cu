// Section threads: device pointers, streams and events belong to the process, not to the host
// thread that made them; the current device belongs to each host thread. A worker thread uses the
// main thread's buffer and event. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 01_uva/threads.cu common/standalone.cu -o build/threads
//   (or in 01_uva/: nvcc -std=c++17 -I.. threads.cu ../common/standalone.cu -o ../build/threads)
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <thread>

namespace {

constexpr std::uint32_t seed = 42;

// The worker thread uses a buffer and an event the main thread made: both belong to the process.
// Its current device does not: a new host thread starts on the default device, whatever the main
// thread chose, so it sets its own. Returns the current device the thread started with.
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

// What the walkthrough found.
struct Found {
    int main_device;        // the main thread's current device while the worker started
    int worker_started_on;  // the worker's current device before it set one
    std::size_t wrong;      // values the worker's kernel did not write right
};

Found walkthrough(int device, std::size_t count) {
    // 1. The main thread makes a buffer and an event on `device`.
    std::uint32_t* buffer = nullptr;
    cudaEvent_t done = nullptr;
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaMalloc(&buffer, count * sizeof *buffer));
    CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));

    // 2. To tell a per-thread current device from a process-wide one, the main thread stands on
    //    a device other than 0 while the worker starts: possible only with a second GPU.
    const int main_device = device != 0 || tutorial::device_count() < 2 ? device : 1;
    CUDA_CHECK(cudaSetDevice(main_device));

    // 3. The worker launches a kernel on the buffer and records the event, then returns: the
    //    event is recorded once it has, though its kernel may still run.
    int started_on = -1;
    std::thread thread([&] { started_on = worker(device, buffer, count, done); });
    thread.join();

    // 4. Back on the buffer's device, the main thread waits on the event another thread
    //    recorded, and checks what the worker's kernel wrote.
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaEventSynchronize(done));
    const std::size_t wrong = mismatches_on_device(buffer, count, seed);
    CUDA_CHECK(cudaEventDestroy(done));
    CUDA_CHECK(cudaFree(buffer));
    return {main_device, started_on, wrong};
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>

int main() {
    const std::size_t count = std::size_t{1} << 20;
    const Found found = walkthrough(0, count);
    std::printf("The main thread stood on device %d; the worker started on device %d.\n",
                found.main_device, found.worker_started_on);
    std::printf("The worker's kernel wrote the main thread's buffer: %zu of %zu values wrong.\n",
                found.wrong, count);
    return found.wrong == 0 ? 0 : 1;
}
#endif
