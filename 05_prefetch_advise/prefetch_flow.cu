// Section prefetch_flow: foo(stream) from the Unified Memory appendix of the Programming Guide:
// allocate, initialise on the CPU, prefetch to the GPU, kernel, prefetch back, use on the CPU,
// free; every GPU step in one stream. (checks/prefetch_flow.cu times it and checks every value.)
#include "common/check.hpp"

#include <cstddef>
#include <cstdint>

namespace {

__global__ void mykernel(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = data[i] * 2 + 1;
    }
}

// What foo saw right after queuing each prefetch: where cudaMemRangeGetAttribute says the last
// prefetch was asked to go (a device ordinal, -1 for the host), and what cudaStreamQuery said
// after the second.
struct Seen {
    int after_first = cudaInvalidDeviceId;
    int after_second = cudaInvalidDeviceId;
    cudaError_t stream_after_second = cudaSuccess;
};

// foo(stream), step by step as the appendix writes it. The appendix leaves init_data and
// use_data open; here the caller passes them: the CPU writes every value, then reads every value.
template <typename Init, typename Use>
Seen foo(cudaStream_t s, int device, std::size_t count, Init init_data, Use use_data) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    const cudaMemLocation cpu{cudaMemLocationTypeHost, 0};
    Seen seen;
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    init_data(data, count);                                    // execute on the CPU
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, s));  // prefetch to the GPU
    CUDA_CHECK(cudaMemRangeGetAttribute(&seen.after_first, sizeof seen.after_first,
                                        cudaMemRangeAttributeLastPrefetchLocation, data, bytes));
    mykernel<<<1024, 256, 0, s>>>(data, count);  // execute on the GPU
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, cpu, 0, s));  // prefetch to the CPU
    CUDA_CHECK(cudaMemRangeGetAttribute(&seen.after_second, sizeof seen.after_second,
                                        cudaMemRangeAttributeLastPrefetchLocation, data, bytes));
    seen.stream_after_second = cudaStreamQuery(s);  // cudaErrorNotReady: still queued
    CUDA_CHECK(cudaStreamSynchronize(s));           // the kernel and both prefetches are done
    use_data(data, count);                          // execute on the CPU
    CUDA_CHECK(cudaFree(data));
    return seen;
}

// The same without the prefetches: the kernel faults the pages over, the CPU faults them back.
template <typename Init, typename Use>
void foo_without_prefetches(cudaStream_t s, std::size_t count, Init init_data, Use use_data) {
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, count * sizeof(std::uint32_t)));
    init_data(data, count);
    mykernel<<<1024, 256, 0, s>>>(data, count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(s));
    use_data(data, count);
    CUDA_CHECK(cudaFree(data));
}

}  // namespace
