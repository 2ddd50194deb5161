// Section concurrency: what the CPU may do while a kernel runs, in the Unified Memory appendix's
// order: its pitfall (N.2.2.1), a kernel waiting for a host write, logical GPU activity (N.2.2.2).
// Alone: nvcc -std=c++17 -I. 03_managed/concurrency.cu common/standalone.cu -o concurrency
// Built alone, from the course's folder (mkdir -p build first), then ./build/concurrency:
//   nvcc -std=c++17 -I. 03_managed/concurrency.cu common/standalone.cu -o build/concurrency
//   (or in 03_managed/: nvcc -std=c++17 -I.. concurrency.cu ../common/standalone.cu
//       -o ../build/concurrency)  (on the same line)
#include "common/busy.hpp"
#include "common/check.hpp"

#include <chrono>
#include <cstdio>
#include <cuda/atomic>
#include <thread>

namespace {

// Step 1. The Unified Memory appendix's example: a kernel writes x while the host writes y.
__device__ __managed__ int x;
__device__ __managed__ int y = 2;

__global__ void write_x() {
    x = 10;
}

// The host writes y while write_x may still run, then synchronizes. Legal only where
// concurrentManagedAccess is 1; where it is 0 the GPU owns all managed memory from the launch
// until the host synchronizes, and the write is a segmentation fault. 20 ms of other work ahead
// of write_x keep the GPU busy at the write (write_x is loaded first, or its launch could wait
// for that work). Returns what cudaStreamQuery said just before the write (cudaErrorNotReady:
// the GPU was busy).
cudaError_t write_y_during_kernel() {
    tutorial::load_kernel(write_x);
    tutorial::launch_busy(nullptr, 20.0);
    write_x<<<1, 1>>>();
    CUDA_CHECK_LAUNCH();
    const cudaError_t at_the_write = cudaStreamQuery(nullptr);
    y = 20;
    CUDA_CHECK(cudaDeviceSynchronize());
    return at_the_write;
}

// Step 2. A kernel that finishes only because it sees a write the host makes while it runs.
// Sharing an atomic between CPU and GPU is libcu++'s rule (the concurrency restrictions of
// cuda::atomic_ref): only at thread_scope_system, and only in managed memory where
// concurrentManagedAccess = 1 (or host memory where hostNativeAtomicSupported = 1). A plain int
// would be a data race: nothing would make the kernel read the flag again.
using SystemAtomic = cuda::atomic_ref<int, cuda::thread_scope_system>;

// Waits until the host sets *flag, for at most 5 s, then records whether it saw it. The deadline
// is on the GPU's nanosecond timer: clock64 counts SM cycles, whose rate changes with the clock.
__global__ void wait_for_host(int* flag, int* outcome) {
    SystemAtomic go(*flag);
    const unsigned long long give_up = tutorial::global_nanoseconds() + 5'000'000'000ULL;
    while (go.load(cuda::memory_order_acquire) == 0) {
        if (tutorial::global_nanoseconds() > give_up) {
            *outcome = 2;  // timed out: the host's write never became visible
            return;
        }
        __nanosleep(1000);
    }
    *outcome = 1;
}

// What step 2 saw: cudaStreamQuery while the kernel waits and after the synchronize, and the
// kernel's outcome (1: it saw the flag, 2: it gave up waiting).
struct HostWrite {
    cudaError_t while_waiting, after;
    int outcome;
};

HostWrite kernel_sees_host_write() {
    int* flag = nullptr;
    int* outcome = nullptr;
    CUDA_CHECK(cudaMallocManaged(&flag, sizeof *flag));
    CUDA_CHECK(cudaMallocManaged(&outcome, sizeof *outcome));
    *flag = 0;
    *outcome = 0;
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    wait_for_host<<<1, 1, 0, stream>>>(flag, outcome);
    CUDA_CHECK_LAUNCH();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    HostWrite seen{};
    seen.while_waiting = cudaStreamQuery(stream);  // cudaErrorNotReady: the kernel still waits
    SystemAtomic(*flag).store(1, cuda::memory_order_release);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    seen.after = cudaStreamQuery(stream);
    seen.outcome = *outcome;
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(flag));
    CUDA_CHECK(cudaFree(outcome));
    return seen;
}

__global__ void add_one(int* counter, int times) {
    for (int i = 0; i < times; ++i) atomicAdd(counter, 1);
}

// Step 3. Logical GPU activity: the host may use managed data once a call has told it that the
// work on it is done, and cudaStreamQuery returning cudaSuccess is such a call. Returns the
// counter as the host then reads it; `polls` says how often the stream was still busy.
int poll_then_read(long& polls) {
    int* counter = nullptr;
    CUDA_CHECK(cudaMallocManaged(&counter, sizeof *counter));
    *counter = 0;
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    // 10 ms of other work first, so that there is something to poll for. Loaded beforehand, or
    // add_one's first launch may wait for it.
    tutorial::load_kernel(add_one);
    tutorial::launch_busy(stream, 10.0);
    add_one<<<4, 256, 0, stream>>>(counter, 10);
    CUDA_CHECK_LAUNCH();
    polls = 0;
    cudaError_t status = cudaErrorNotReady;
    while ((status = cudaStreamQuery(stream)) == cudaErrorNotReady) ++polls;
    CUDA_CHECK(status);
    const int read = *counter;
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(counter));
    return read;
}

// What step 4 saw: whether the first kernel still ran after the host's writes (cudaStreamQuery),
// and the three values.
struct FourPoints {
    bool busy;
    int non_managed, also_managed, managed;
};

// Step 4. The appendix's four points about what may run while a kernel uses managed memory.
// 20 ms of other work ahead of the first kernel keep the GPU busy while the host writes.
FourPoints four_points(bool concurrent) {
    int* non_managed = nullptr;
    int* managed = nullptr;
    int* also_managed = nullptr;
    CUDA_CHECK(cudaMallocHost(&non_managed, sizeof(int)));
    CUDA_CHECK(cudaMallocManaged(&managed, sizeof(int)));
    CUDA_CHECK(cudaMallocManaged(&also_managed, sizeof(int)));
    *managed = 0;
    cudaStream_t stream1 = nullptr;
    cudaStream_t stream2 = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream1, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream2, cudaStreamNonBlocking));
    tutorial::launch_busy(stream1, 20.0);
    add_one<<<8, 256, 0, stream1>>>(managed, 100);
    CUDA_CHECK_LAUNCH();
    *non_managed = 1;                   // point 1: pinned, non-managed memory: always fine
    if (concurrent) *also_managed = 2;  // point 2: only where concurrentManagedAccess = 1
    FourPoints seen{};
    seen.busy = cudaStreamQuery(stream1) == cudaErrorNotReady;
    add_one<<<8, 256, 0, stream2>>>(managed, 100);  // point 3: two streams, same data
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    // point 4: kernels on other GPUs may use the same managed data too
    seen.non_managed = *non_managed;
    seen.also_managed = concurrent ? *also_managed : 0;
    seen.managed = *managed;
    CUDA_CHECK(cudaStreamDestroy(stream1));
    CUDA_CHECK(cudaStreamDestroy(stream2));
    CUDA_CHECK(cudaFreeHost(non_managed));
    CUDA_CHECK(cudaFree(managed));
    CUDA_CHECK(cudaFree(also_managed));
    return seen;
}

// What the walkthrough found, step by step (steps 1 and 2 only where they are legal).
struct Found {
    bool concurrent = false;                         // concurrentManagedAccess = 1
    cudaError_t query_at_write = cudaErrorNotReady;  // step 1: the GPU at the host's write
    int x = 0, y = 0;                                // step 1: after the synchronize
    HostWrite host_write{};                          // step 2
    long polls = 0;                                  // step 3: cudaErrorNotReady answers
    int counter = 0;                                 // step 3: the counter the host read
    FourPoints points{};                             // step 4
};

Found walkthrough(int device) {
    Found found;
    int concurrent = 0;
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device));
    found.concurrent = concurrent == 1;
    // Steps 1 and 2 touch managed memory while a kernel runs: legal only where
    // concurrentManagedAccess = 1 (elsewhere a segmentation fault, N.2.2.1).
    if (found.concurrent) {
        found.query_at_write = write_y_during_kernel();
        found.x = x;
        found.y = y;
        found.host_write = kernel_sees_host_write();
    }
    found.counter = poll_then_read(found.polls);
    found.points = four_points(found.concurrent);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const Found f = walkthrough(0);
    std::printf("concurrentManagedAccess = %d\n", f.concurrent ? 1 : 0);
    if (f.concurrent) {
        std::printf("1. at the host's write: %s; then x = %d, y = %d\n",
                    cudaGetErrorName(f.query_at_write), f.x, f.y);
        std::printf("2. the kernel %s\n",
                    f.host_write.outcome == 1 ? "saw the host's flag" : "gave up waiting");
    }
    std::printf("3. %ld polls, then the counter read %d (expected %d)\n", f.polls, f.counter,
                4 * 256 * 10);
    std::printf("4. pinned %d, shared counter %d (expected %d)\n", f.points.non_managed,
                f.points.managed, 2 * 8 * 256 * 100);
    return 0;
}
#endif
