// Section attach_wrong_variable: the appendix's second example (x attached to the kernel's stream,
// y touched by the CPU), then the rules of cudaStreamAttachMemAsync itself. Alone (where
// concurrentManagedAccess = 0 it ends at the first write, a segmentation fault):
//   nvcc -std=c++17 -I. 04_stream_attach/attach_wrong_variable.cu common/standalone.cu
//       -o build/attach_wrong_variable  (on the same line)
//   (or in 04_stream_attach/: nvcc -std=c++17 -I.. attach_wrong_variable.cu
//       ../common/standalone.cu -o ../build/attach_wrong_variable)  (on the same line)
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/step.hpp"

#include <cstddef>
#include <cstdio>
namespace {

__device__ __managed__ int x;
__device__ __managed__ int y = 2;

__global__ void kernel() {
    x = 10;
}

// The walkthrough's steps, watched wherever steps are: the two CPU writes made while a kernel
// runs, and the attach call queued behind one.
constexpr tutorial::Step write_y{"the CPU writes y, still global, during the kernel"};
constexpr tutorial::Step attach_queued{"an attach queued behind a running kernel"};
constexpr tutorial::Step write_pending{"the CPU writes before the queued attach takes effect"};

// Step 1. The mistake: x is attached to stream1, but the host then writes y, which is still
// attached globally, while a kernel runs. Where concurrentManagedAccess = 0, that write is a
// segmentation fault (the Guide's N.2.2.1: any CPU access to managed memory while the GPU is
// active, even to an allocation the kernel does not use).
void write_y_with_x_attached() {
    tutorial::load_kernel(kernel);  // or its first launch may wait for the busy kernel
    cudaStream_t stream1 = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream1));
    CUDA_CHECK(cudaStreamAttachMemAsync(stream1, &x));  // length 0, cudaMemAttachSingle
    CUDA_CHECK(cudaDeviceSynchronize());
    tutorial::launch_busy(stream1, 20.0);  // so that the kernel is surely still running
    kernel<<<1, 1, 0, stream1>>>();
    CUDA_CHECK_LAUNCH();
    {
        const tutorial::During during(write_y, stream1);
        y = 20;
    }
    CUDA_CHECK(cudaStreamSynchronize(stream1));
    CUDA_CHECK(cudaStreamDestroy(stream1));
}

// Step 2. What cudaStreamAttachMemAsync accepts and refuses. The reference: Single on the NULL
// stream returns "an error" (which one, it does not say); the length must be 0 or the whole
// allocation (what another length does, it does not say).
struct AttachAnswers {
    cudaError_t single_null_stream;  // not allowed
    cudaError_t single_length_0;
    cudaError_t single_whole_size;
    cudaError_t single_half_size;  // not allowed
    cudaError_t host_null_stream;
    cudaError_t global_own_stream;
};

AttachAnswers try_attach_calls(cudaStream_t stream, char* data, std::size_t bytes) {
    AttachAnswers a{};
    a.single_null_stream = cudaStreamAttachMemAsync(nullptr, data, 0, cudaMemAttachSingle);
    a.single_length_0 = cudaStreamAttachMemAsync(stream, data, 0, cudaMemAttachSingle);
    a.single_whole_size = cudaStreamAttachMemAsync(stream, data, bytes, cudaMemAttachSingle);
    a.single_half_size = cudaStreamAttachMemAsync(stream, data, bytes / 2, cudaMemAttachSingle);
    a.host_null_stream = cudaStreamAttachMemAsync(nullptr, data, 0, cudaMemAttachHost);
    a.global_own_stream = cudaStreamAttachMemAsync(stream, data, 0, cudaMemAttachGlobal);
    (void)cudaGetLastError();  // the refused calls leave their error behind: clear it
    return a;
}

// How long the kernel ahead of a queued attach runs: long enough that the host surely goes on
// before it ends, even when the host is descheduled for a moment.
constexpr double queued_kernel_ms = 200.0;

// Step 2, continued. The call only enqueues the attach: it returns while the kernel queued before
// it still runs, and the attach takes effect once that kernel is done.
void attach_behind_kernel(cudaStream_t stream, char* data) {
    tutorial::launch_busy(stream, queued_kernel_ms);
    {
        const tutorial::During during(attach_queued, stream);
        CUDA_CHECK(cudaStreamAttachMemAsync(stream, data, 0, cudaMemAttachHost));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));  // now the attach has taken effect
}

// Step 3. An attach to the host queued behind a running kernel, and a CPU write before that
// kernel ends. The attach takes effect only when the work before it has finished, so until then
// the data is still globally visible: where concurrentManagedAccess = 0 the write is a
// segmentation fault (N.2.2.1, as in step 1); had the attach taken effect at once, the write
// would be allowed.
void write_before_queued_attach() {
    int* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, sizeof *data));  // global: cudaMemAttachGlobal
    *data = 1;
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream));
    tutorial::launch_busy(stream, queued_kernel_ms);
    CUDA_CHECK(cudaStreamAttachMemAsync(stream, data, 0, cudaMemAttachHost));
    {
        const tutorial::During during(write_pending, stream);
        *data = 2;  // the attach is still queued: data is still global
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(data));
}

// Step 2 on a managed allocation of 1 MiB and a stream of its own: what each call returned.
AttachAnswers attach_rules() {
    const std::size_t bytes = 1 << 20;
    char* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream));
    const AttachAnswers answers = try_attach_calls(stream, data, bytes);
    attach_behind_kernel(stream, data);
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(data));
    return answers;
}

// What the walkthrough found: x and y after step 1, and what each attach call of step 2 returned.
struct Found {
    int x, y;
    AttachAnswers answers;
};

Found walkthrough() {
    Found found{};
    // 1. The appendix's mistake: the CPU writes y while a kernel runs, with only x attached.
    write_y_with_x_attached();
    found.x = x;
    found.y = y;
    // 2. The rules of the call, and that it only enqueues the attach.
    found.answers = attach_rules();
    // 3. A write before a queued attach has taken effect.
    write_before_queued_attach();
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough();
    times.print();
    std::printf(
        "x = %d, y = %d; cudaMemAttachSingle on the NULL stream -> %s, on half the "
        "allocation -> %s\n",
        found.x, found.y, cudaGetErrorName(found.answers.single_null_stream),
        cudaGetErrorName(found.answers.single_half_size));
    // The card's answer, as found here (where a write faults, the process ends before this line;
    // the chapter's program runs each write in a child: ./build/bin/04_stream_attach
    // attach_wrong_variable).
    std::printf(
        "exit code 0: every CPU write lived; Single on the NULL stream returned %s, and "
        "the attach queued behind the %.0f ms kernel returned after %.3f ms\n",
        cudaGetErrorName(found.answers.single_null_stream), queued_kernel_ms,
        times.median_host_ms(attach_queued));
    return 0;
}
#endif
