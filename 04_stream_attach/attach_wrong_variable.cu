// Section attach_wrong_variable: the appendix's second example (x attached to the kernel's stream,
// y touched by the CPU), then the rules of cudaStreamAttachMemAsync itself. (checks/ runs each
// step in a child process, where a segmentation fault ends the child, and judges it.)
#include "common/busy.hpp"
#include "common/check.hpp"

#include <cstddef>

namespace {

__device__ __managed__ int x;
__device__ __managed__ int y = 2;

__global__ void kernel() {
    x = 10;
}

// Step 1. The mistake: x is attached to stream1, but the host then writes y, which is still
// attached globally, while a kernel runs. Where concurrentManagedAccess = 0, that write is a
// segmentation fault.
void write_y_with_x_attached() {
    tutorial::load_kernel(kernel);  // or its first launch may wait for the busy kernel
    cudaStream_t stream1 = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream1));
    CUDA_CHECK(cudaStreamAttachMemAsync(stream1, &x));  // length 0, cudaMemAttachSingle
    CUDA_CHECK(cudaDeviceSynchronize());
    tutorial::launch_busy(stream1, 20.0);  // so that the kernel is surely still running
    kernel<<<1, 1, 0, stream1>>>();
    CUDA_CHECK_LAUNCH();
    y = 20;
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

// How long the kernel ahead of a queued attach runs: long enough that the host surely checks on
// it before it ends, even when the host is descheduled for a moment.
constexpr double queued_kernel_ms = 200.0;

// Step 2, continued. The call only enqueues the attach. A query of the stream would say
// cudaErrorNotReady because of the kernel ahead of it, whatever the attach did; an event recorded
// between the two tells whether the kernel was still running when the call returned.
struct QueuedAttach {
    cudaError_t at_return;   // the kernel's event as the attach call returned
    cudaError_t after_sync;  // the same after cudaStreamSynchronize
};

QueuedAttach attach_behind_kernel(cudaStream_t stream, char* data) {
    cudaEvent_t kernel_done = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&kernel_done, cudaEventDisableTiming));
    tutorial::launch_busy(stream, queued_kernel_ms);
    CUDA_CHECK(cudaEventRecord(kernel_done, stream));
    CUDA_CHECK(cudaStreamAttachMemAsync(stream, data, 0, cudaMemAttachHost));
    QueuedAttach q{};
    q.at_return = cudaEventQuery(kernel_done);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    q.after_sync = cudaEventQuery(kernel_done);
    CUDA_CHECK(cudaEventDestroy(kernel_done));
    return q;
}

// Step 2 on one managed allocation of 1 MiB and a stream of its own.
constexpr std::size_t rules_bytes = 1 << 20;

struct AttachRules {
    AttachAnswers answers;
    QueuedAttach queued;
};

AttachRules attach_rules() {
    char* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, rules_bytes));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream));
    AttachRules rules{};
    rules.answers = try_attach_calls(stream, data, rules_bytes);
    rules.queued = attach_behind_kernel(stream, data);
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(data));
    return rules;
}

// Step 3. An attach to the host queued behind a running kernel, and a CPU write before that
// kernel ends. The attach takes effect only when the work before it has finished, so until then
// the data is still globally visible: where concurrentManagedAccess = 0 the write is a
// segmentation fault; had the attach taken effect at once, the write would be allowed. Returns
// the kernel's event as the host wrote.
cudaError_t write_before_queued_attach() {
    int* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, sizeof *data));  // global: cudaMemAttachGlobal
    *data = 1;
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream));
    cudaEvent_t kernel_done = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&kernel_done, cudaEventDisableTiming));
    tutorial::launch_busy(stream, queued_kernel_ms);
    CUDA_CHECK(cudaEventRecord(kernel_done, stream));
    CUDA_CHECK(cudaStreamAttachMemAsync(stream, data, 0, cudaMemAttachHost));
    *data = 2;  // the attach is still queued: data is still global
    const cudaError_t at_write = cudaEventQuery(kernel_done);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaEventDestroy(kernel_done));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(data));
    return at_write;
}

}  // namespace
