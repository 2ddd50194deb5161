// Exercise ex05_read_mostly (chapter 05_prefetch_advise): data both sides only read.
//
// A lookup table in managed memory is read by a kernel, then by the CPU, round after round;
// nobody writes it. lookup_rounds_given() leaves it to page faults: each kernel pulls the pages to
// the GPU, and each CPU pass pulls them back, so the whole table crosses the bus twice a round.
// Give the table the advice that fits data that is read and never written, so that each side
// keeps its own copy (the `read_mostly` section shows what the advice does).
//
// The check (exercises/check/read_mostly.cu) runs each function on its own 64 MiB table and
// passes when
//   - both return the sum of the GPU's and the CPU's reads, round by round,
//   - lookup_rounds() finishes at least 3x sooner than lookup_rounds_given().
// Run it: cmake --build build --target ex05_read_mostly && ./build/bin/ex05_read_mostly
//    or:  ctest --preset exercise -R 05_prefetch_advise
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// Reads every value of the table once.
__global__ void sum_table(const std::uint32_t* table, std::size_t count, unsigned long long* sum) {
    unsigned long long partial = 0;
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        partial += table[i];
    }
    atomicAdd(sum, partial);
}

// One round: the kernel reads every value, then the CPU reads every 256th (which touches every
// page of the table).
std::uint64_t one_round(const std::uint32_t* table, std::size_t count, unsigned long long* sum) {
    *sum = 0;
    sum_table<<<1024, 256>>>(table, count, sum);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::uint64_t total = *sum;
    for (std::size_t i = 0; i < count; i += 256) total += table[i];
    return total;
}

// Given: no advice.
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

// Yours: the same rounds, with advice on the table first.
std::uint64_t lookup_rounds(const std::uint32_t* table, std::size_t count, int rounds, int device) {
    // TODO 1: cudaMemAdvise(table, bytes, cudaMemAdviseSetReadMostly, location), where location
    //         is a cudaMemLocation {cudaMemLocationTypeDevice, device} (ReadMostly ignores it).
    return lookup_rounds_given(table, count, rounds, device);
}
