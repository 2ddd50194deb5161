// Section aliasing: one piece of physical memory mapped at two addresses, and the Programming
// Guide's foo1/foo2 example (Virtual Memory Management, "Virtual Aliasing Support") on them.
// (checks/aliasing.cu maps the aliases, runs the streams with and without the event, checks.)
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cstddef>
#include <cstdint>

namespace {

// The appendix's three streams, and the event that orders them.
struct Streams {
    cudaStream_t stream1, stream2, stream3;
    cudaEvent_t event;
};

// foo1 and foo2 of the Virtual Memory Management appendix, on whole arrays: foo1 writes through
// A, foo2 reads through B.
__global__ void foo1(std::uint32_t* A, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        A[i] += 1;
    }
}

__global__ void foo2(const std::uint32_t* B, std::uint32_t* seen, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        seen[i] = B[i];
    }
}

// Step 1. One physical allocation at two addresses: the same handle mapped into two reserved
// ranges.
void map_twice(CUmemGenericAllocationHandle memory, std::size_t bytes, CUdeviceptr a,
               CUdeviceptr b) {
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    CU_CHECK(cuMemMap(a, bytes, 0, memory, 0));
    CU_CHECK(cuMemMap(b, bytes, 0, memory, 0));
}

// Step 2. The appendix's streams: a copy into B and foo1 on A in stream1, then an event; foo2
// reading B in stream2 and a copy out of B in stream3 both wait for it.
void with_event(std::uint32_t* A, std::uint32_t* B, const std::uint32_t* input, std::uint32_t* seen,
                std::uint32_t* output, std::size_t count, const Streams& s) {
    const std::size_t bytes = count * sizeof *A;
    CUDA_CHECK(cudaMemcpyAsync(B, input, bytes, cudaMemcpyDeviceToDevice, s.stream1));
    foo1<<<256, 256, 0, s.stream1>>>(A, count);  // after the copy into B: stream order
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(s.event, s.stream1));
    CUDA_CHECK(cudaStreamWaitEvent(s.stream2, s.event));
    foo2<<<256, 256, 0, s.stream2>>>(B, seen, count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamWaitEvent(s.stream3, s.event));
    CUDA_CHECK(cudaMemcpyAsync(output, B, bytes, cudaMemcpyDeviceToDevice, s.stream3));
    CUDA_CHECK(cudaDeviceSynchronize());
}

// Step 3. The same without the event: nothing makes foo2 wait for foo1.
void without_event(std::uint32_t* A, std::uint32_t* B, std::uint32_t* seen, std::size_t count,
                   const Streams& s) {
    foo1<<<256, 256, 0, s.stream1>>>(A, count);
    CUDA_CHECK_LAUNCH();
    foo2<<<256, 256, 0, s.stream2>>>(B, seen, count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
