// Section aliasing: one physical allocation at two addresses, and the Programming Guide's
// foo1/foo2 (Virtual Memory Management, "Virtual Aliasing Support") on them.
// Built alone, from the course's folder (mkdir -p build first), then ./build/aliasing:
//   nvcc -std=c++17 -I. 06_vmm/aliasing.cu common/standalone.cu -o build/aliasing
//   (or in 06_vmm/: nvcc -std=c++17 -I.. aliasing.cu ../common/standalone.cu -o ../build/aliasing)
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"

#include <cstdint>
#include <cstdio>

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

// The appendix's streams: a copy into B and foo1 on A in stream1, then an event; foo2
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

// The same without the event: nothing makes foo2 wait for foo1.
void without_event(std::uint32_t* A, std::uint32_t* B, std::uint32_t* seen, std::size_t count,
                   const Streams& s) {
    foo1<<<256, 256, 0, s.stream1>>>(A, count);
    CUDA_CHECK_LAUNCH();
    foo2<<<256, 256, 0, s.stream2>>>(B, seen, count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}

// What the walkthrough found: values that were not what the reference says they are.
struct Found {
    std::size_t count = 0;          // values in the allocation
    std::size_t through_b = 0;      // differing through B after a finished write through A
    std::size_t ordered_wrong = 0;  // not input + 1 in foo2's view or the copy, with the event
    std::size_t unordered_old = 0;  // still the input in foo2's view, without the event
};

Found walkthrough(int device, std::size_t granules) {
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    Found found;
    // 1. One physical allocation, two reserved ranges, the same handle mapped into each; each
    //    mapping needs its own access grant. The mappings keep the memory; the handle can go.
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);
    const std::size_t bytes = granules * tutorial::vmm_granularity(prop);
    const CUmemGenericAllocationHandle memory = tutorial::vmm_create(prop, bytes);
    const CUdeviceptr a = tutorial::vmm_reserve(bytes, 0);
    const CUdeviceptr b = tutorial::vmm_reserve(bytes, 0);
    CU_CHECK(cuMemMap(a, bytes, 0, memory, 0));
    CU_CHECK(cuMemMap(b, bytes, 0, memory, 0));
    tutorial::vmm_set_access(a, bytes, device);
    tutorial::vmm_set_access(b, bytes, device);
    tutorial::vmm_release(memory);
    auto* A = reinterpret_cast<std::uint32_t*>(a);
    auto* B = reinterpret_cast<std::uint32_t*>(b);
    found.count = bytes / sizeof *A;

    // 2. A kernel writes through A; once it has finished, B shows the same data.
    fill_on_device(A, found.count, 21);
    found.through_b = mismatches_on_device(B, found.count, 21);

    // 3. The appendix's streams, on an input pattern: foo2 and the copy see input + 1 through B.
    Streams s{};
    CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream1, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream2, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream3, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&s.event, cudaEventDisableTiming));
    std::uint32_t *input = nullptr, *seen = nullptr, *output = nullptr;
    CUDA_CHECK(cudaMalloc(&input, bytes));
    CUDA_CHECK(cudaMalloc(&seen, bytes));
    CUDA_CHECK(cudaMalloc(&output, bytes));
    fill_on_device(input, found.count, 22);
    with_event(A, B, input, seen, output, found.count, s);
    found.ordered_wrong = mismatches_on_device(seen, found.count, 22, {1, 1}) +
                          mismatches_on_device(output, found.count, 22, {1, 1});

    // 4. Without the event, with stream1 busy for 100 ms before foo1: nothing makes foo2 wait,
    //    and it reads B before foo1 writes A.
    fill_on_device(B, found.count, 23);
    tutorial::launch_busy(s.stream1, 100.0);
    without_event(A, B, seen, found.count, s);
    found.unordered_old = found.count - mismatches_on_device(seen, found.count, 23);

    // 5. Tear down: the buffers, the streams, both mappings (the last one frees the memory).
    for (std::uint32_t* p : {input, seen, output}) CUDA_CHECK(cudaFree(p));
    CUDA_CHECK(cudaEventDestroy(s.event));
    for (cudaStream_t stream : {s.stream1, s.stream2, s.stream3})
        CUDA_CHECK(cudaStreamDestroy(stream));
    tutorial::vmm_unmap(a, bytes);
    tutorial::vmm_unmap(b, bytes);
    tutorial::vmm_free(a, bytes);
    tutorial::vmm_free(b, bytes);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const Found found = walkthrough(0, 1);
    std::printf(
        "%zu values: %zu differ through B after a finished write through A; with the "
        "event %zu wrong; without it foo2 still saw the input in %zu\n",
        found.count, found.through_b, found.ordered_wrong, found.unordered_old);
    return found.through_b == 0 && found.ordered_wrong == 0 ? 0 : 1;
}
#endif
