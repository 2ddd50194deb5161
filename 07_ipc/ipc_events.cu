// Section ipc_events: a producer/consumer pipeline across processes. The master produces each
// batch on its stream and records an interprocess event; the consumer's stream waits on that
// event before it reads, so it never reads a batch early.
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstddef>
#include <cstdint>

namespace {

// Step 1. The master: an event other processes can wait on (an interprocess event cannot record
// timing), and handles for it and for the buffer.
cudaEvent_t share(void* buffer, cudaIpcMemHandle_t* memory_handle,
                  cudaIpcEventHandle_t* event_handle) {
    cudaEvent_t produced = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&produced, cudaEventInterprocess | cudaEventDisableTiming));
    CUDA_CHECK(cudaIpcGetMemHandle(memory_handle, buffer));
    CUDA_CHECK(cudaIpcGetEventHandle(event_handle, produced));
    return produced;
}

// Step 2. The consumer opens both handles once.
void open_shared(const cudaIpcMemHandle_t& memory_handle, const cudaIpcEventHandle_t& event_handle,
                 void** data, cudaEvent_t* produced) {
    CUDA_CHECK(cudaIpcOpenMemHandle(data, memory_handle, cudaIpcMemLazyEnablePeerAccess));
    CUDA_CHECK(cudaIpcOpenEventHandle(produced, event_handle));
}

// Step 3. The master queues each batch on its stream (here every byte of the buffer set to
// `value`) and records the event behind it: the record is "this batch is ready".
void produce(cudaStream_t stream, std::uint32_t* buffer, std::size_t count, int value,
             cudaEvent_t produced) {
    CUDA_CHECK(cudaMemsetAsync(buffer, value, count * sizeof *buffer, stream));
    CUDA_CHECK(cudaEventRecord(produced, stream));
}

// Step 4. For each batch the consumer's stream waits for the master's last record of the event,
// then reads.
unsigned long long consume(cudaStream_t stream, cudaEvent_t produced, const std::uint32_t* data,
                           std::size_t count, unsigned long long* sum) {
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof *sum, stream));
    CUDA_CHECK(cudaStreamWaitEvent(stream, produced, 0));  // the master's work comes first
    sum_on_device_async(data, count, sum, stream);
    unsigned long long value = 0;
    CUDA_CHECK(cudaMemcpyAsync(&value, sum, sizeof value, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return value;
}

}  // namespace
