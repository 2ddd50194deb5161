// Exercise ex05_read_mostly (chapter 05_prefetch_advise), the course's solution: ReadMostly on
// the table, so that the GPU and the CPU each read a copy of their own and nothing migrates after
// the first round. The task is in ../read_mostly.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

__global__ void sum_table(const std::uint32_t* table, std::size_t count, unsigned long long* sum) {
    unsigned long long partial = 0;
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        partial += table[i];
    }
    atomicAdd(sum, partial);
}

std::uint64_t one_round(const std::uint32_t* table, std::size_t count, unsigned long long* sum) {
    *sum = 0;
    sum_table<<<1024, 256>>>(table, count, sum);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::uint64_t total = *sum;
    for (std::size_t i = 0; i < count; i += 256) total += table[i];
    return total;
}

std::uint64_t lookup_rounds_given(const std::uint32_t* table, std::size_t count, int rounds,
                                  int device) {
    (void)device;
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMallocManaged(&sum, sizeof(*sum), cudaMemAttachGlobal));
    std::uint64_t total = 0;
    for (int r = 0; r < rounds; ++r) total += one_round(table, count, sum);
    CUDA_CHECK(cudaFree(sum));
    return total;
}

std::uint64_t lookup_rounds(const std::uint32_t* table, std::size_t count, int rounds, int device) {
    cudaMemLocation location{};
    location.type = cudaMemLocationTypeDevice;
    location.id = device;
    // A read by either side now copies the page instead of moving it; a write would drop the
    // other copies, which is why it suits data nobody writes.
    CUDA_CHECK(
        cudaMemAdvise(table, count * sizeof(std::uint32_t), cudaMemAdviseSetReadMostly, location));
    return lookup_rounds_given(table, count, rounds, device);
}
