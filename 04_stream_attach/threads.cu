// Section threads: the Unified Memory appendix's run_task (N.2.2.5) in 4 host threads at once,
// each with its data attached to a stream of its own, then in the one stream they share. Alone:
//   nvcc -std=c++17 -I. 04_stream_attach/threads.cu common/standalone.cu -o build/threads
//   (or in 04_stream_attach/: nvcc -std=c++17 -I.. threads.cu ../common/standalone.cu
//       -o ../build/threads)  (on the same line)
#include "common/check.hpp"
#include "common/step.hpp"

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>
namespace {

// Affine integer steps: real work whose result the CPU can predict exactly.
constexpr unsigned step_a = 1664525u;
constexpr unsigned step_c = 1013904223u;

__global__ void transform(unsigned* data, int n, int rounds) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned v = data[i];
        for (int r = 0; r < rounds; ++r) v = v * step_a + step_c;
        data[i] = v;
    }
}

void host_process(unsigned* data, int n, unsigned task) {
    for (int i = 0; i < n; ++i) data[i] ^= task;
}

// A task's work: `iterations` times a kernel of `blocks` blocks of 256 threads (each element
// takes `rounds` steps), then the CPU's pass over the same `elements`; a last kernel.
struct Work {
    int elements, iterations, rounds, blocks;
};

// Each thread's kernels get a share of the GPU's multiprocessors (at most 8 blocks), so that
// every thread's kernel fits beside the others'; 8 elements per GPU thread, enough steps each
// that the kernels, not the launches and the waits, take most of a task's time.
Work work_for(int device, int threads) {
    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const int blocks = sms / threads < 1 ? 1 : (sms / threads > 8 ? 8 : sms / threads);
    return Work{blocks * 256 * 8, 20, 16000, blocks};
}

// Where the threads wait for each other (all of them, and the thread that started them).
class Barrier {
public:
    explicit Barrier(int parties) : parties_(parties), left_(parties) {}
    void arrive_and_wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        const int generation = generation_;
        if (--left_ == 0) {
            ++generation_;
            left_ = parties_;
            all_here_.notify_all();
            return;
        }
        all_here_.wait(lock, [&] { return generation_ != generation; });
    }

private:
    std::mutex mutex_;
    std::condition_variable all_here_;
    int parties_, left_, generation_ = 0;
};

// The stream a task runs in: one it creates (the appendix's way), the per-thread default stream,
// or the legacy NULL stream (0), the one stream every thread shares.
enum class StreamChoice { own, per_thread, legacy };

// The values of a task's data that are not what its kernels and CPU passes make of i + task.
int wrong_values(const unsigned* data, const Work& work, unsigned task) {
    unsigned a = 1, c = 0;  // a kernel's `rounds` steps as one affine step
    for (int r = 0; r < work.rounds; ++r) {
        a *= step_a;
        c = c * step_a + step_c;
    }
    int wrong = 0;
    for (int i = 0; i < work.elements; ++i) {
        unsigned v = static_cast<unsigned>(i) + task;
        for (int it = 0; it < work.iterations; ++it) v = (a * v + c) ^ task;
        wrong += data[i] != a * v + c;
    }
    return wrong;
}

// The appendix's run_task, in one host thread. It waits at `gate` before its loop (once every
// thread has its data) and after it (until every thread is done), so that the loops run at the
// same time and no thread's allocation or cudaFree falls inside another's loop.
int run_task(int device, StreamChoice choice, const Work& work, unsigned task, Barrier& gate) {
    CUDA_CHECK(cudaSetDevice(device));  // a new host thread starts on device 0
    cudaStream_t stream = nullptr;      // the legacy NULL stream, unless:
    if (choice == StreamChoice::own) CUDA_CHECK(cudaStreamCreate(&stream));
    if (choice == StreamChoice::per_thread) stream = cudaStreamPerThread;
    // Allocated attached to the host (no other thread's kernel can be using it), then attached to
    // this thread's stream. In the shared legacy stream it stays global.
    unsigned* data = nullptr;
    const std::size_t bytes = work.elements * sizeof(unsigned);
    if (choice == StreamChoice::legacy) {
        CUDA_CHECK(cudaMallocManaged(&data, bytes));
    } else {
        CUDA_CHECK(cudaMallocManaged(&data, bytes, cudaMemAttachHost));
        CUDA_CHECK(cudaStreamAttachMemAsync(stream, data));
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    for (int i = 0; i < work.elements; ++i) data[i] = static_cast<unsigned>(i) + task;
    gate.arrive_and_wait();  // every thread has its data
    gate.arrive_and_wait();  // go
    for (int it = 0; it < work.iterations; ++it) {
        transform<<<work.blocks, 256, 0, stream>>>(data, work.elements, work.rounds);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaStreamSynchronize(stream));  // this thread's stream only
        host_process(data, work.elements, task);    // other threads' kernels may still run
    }
    transform<<<work.blocks, 256, 0, stream>>>(data, work.elements, work.rounds);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    gate.arrive_and_wait();  // every loop is done
    const int wrong = wrong_values(data, work, task);
    CUDA_CHECK(cudaFree(data));
    if (choice == StreamChoice::own) CUDA_CHECK(cudaStreamDestroy(stream));
    return wrong;
}

// `threads` tasks at once, one host thread each; the step `step` lasts from the moment their
// loops start together to the moment the last one ends. Returns their wrong values.
int run_tasks(int device, int threads, StreamChoice choice, const Work& work,
              const tutorial::Step& step) {
    Barrier gate(threads + 1);
    std::vector<int> wrong(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            wrong[t] = run_task(device, choice, work, static_cast<unsigned>(t + 1), gate);
        });
    }
    gate.arrive_and_wait();  // every thread has its data
    {
        const tutorial::During during(step);
        gate.arrive_and_wait();  // go
        gate.arrive_and_wait();  // every loop is done
    }
    int total = 0;
    for (int t = 0; t < threads; ++t) {
        pool[t].join();
        total += wrong[t];
    }
    return total;
}

// What the walkthrough found: values that came out wrong, in every task of every way.
struct Found {
    int wrong = 0;
};

// The walkthrough's steps: each way's loops, from their start together to the last one's end,
// each one timed wherever steps are watched.
constexpr tutorial::Step alone{"one task alone, in its own stream"};
constexpr tutorial::Step own_streams{"the threads, a stream each"};
constexpr tutorial::Step per_thread{"the threads, each in cudaStreamPerThread"};
constexpr tutorial::Step legacy{"the threads, sharing the legacy stream"};

Found walkthrough(int device, int threads) {
    CUDA_CHECK(cudaSetDevice(device));
    const Work work = work_for(device, threads);
    Found found;
    // 1. One task alone, in a stream of its own: what the others are compared with.
    found.wrong += run_tasks(device, 1, StreamChoice::own, work, alone);
    // 2. `threads` tasks at once, each in a stream it creates: their kernels run side by side,
    //    and each thread waits for its own stream only.
    found.wrong += run_tasks(device, threads, StreamChoice::own, work, own_streams);
    // 3. The same in cudaStreamPerThread, each host thread's own default stream.
    found.wrong += run_tasks(device, threads, StreamChoice::per_thread, work, per_thread);
    // 4. The same in the legacy NULL stream: every kernel waits for every earlier kernel of every
    //    thread. The data stays global there, and the CPU uses it while other threads' kernels
    //    run: a segmentation fault where concurrentManagedAccess = 0 (the Guide, N.2.2.1), so
    //    only where it is 1.
    int concurrent = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device));
    if (concurrent == 1)
        found.wrong += run_tasks(device, threads, StreamChoice::legacy, work, legacy);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(0, 4);
    times.print();
    std::printf("run_task in 4 host threads, three kinds of stream: %d values wrong\n",
                found.wrong);
    // The card's number: the threads' wall time in the shared legacy stream against a stream
    // each. The legacy way runs only where concurrentManagedAccess = 1 (the walkthrough, step 4).
    int concurrent = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
    if (concurrent == 1) {
        const double legacy_ms = times.median_host_ms(legacy);
        const double own_ms = times.median_host_ms(own_streams);
        std::printf(
            "%.2fx: %.1f ms for four threads sharing the legacy stream against %.1f ms "
            "with a stream each (one task alone: %.1f ms)\n",
            legacy_ms / own_ms, legacy_ms, own_ms, times.median_host_ms(alone));
    }
    return found.wrong == 0 ? 0 : 1;
}
#endif
