// The course's check of exercise ex03_table (the task is in ../table.cu): the learner's table of
// row pointers must be managed memory throughout, so that a kernel can follow its pointers, and
// must be freed.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

// Written by the learner (exercises/table.cu).
int** make_table(int rows, int columns);
void free_table(int** table, int rows);

namespace {

using tutorial::Context;
using tutorial::Result;

// Follows the row pointers on the GPU: one block per row.
__global__ void sum_table(int* const* table, int columns, unsigned long long* sum) {
    const int* row = table[blockIdx.x];
    unsigned long long partial = 0;
    for (int c = threadIdx.x; c < columns; c += blockDim.x) partial += row[c];
    atomicAdd(sum, partial);
}

bool is_managed(const void* pointer) {
    return tutorial::memory_type(pointer) == cudaMemoryTypeManaged;
}

Result check(Context& ctx) {
    constexpr int rows = 64;
    constexpr int columns = 1000;
    int** table = make_table(rows, columns);
    int managed = is_managed(table) ? 1 : 0;
    for (int r = 0; r < rows; ++r) managed += is_managed(table[r]) ? 1 : 0;
    ctx.claim(tutorial::documented(
        "table_is_managed", "the row pointers and every row are managed memory",
        managed == rows + 1,
        std::to_string(managed) + " of " + std::to_string(rows + 1) + " allocations managed",
        "the kernel could not follow these pointers. First step: allocate the array of row "
        "pointers and each row with cudaMallocManaged",
        tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes", "cudaMemoryTypeManaged",
                        "can"}));

    unsigned long long expected = 0;
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < columns; ++c) {
            table[r][c] = r * 1000 + c;
            expected += static_cast<unsigned long long>(r * 1000 + c);
        }
    }
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMallocManaged(&sum, sizeof(*sum), cudaMemAttachGlobal));
    *sum = 0;
    if (managed == rows + 1) {  // a kernel following host pointers would stop with an error
        sum_table<<<rows, 128>>>(table, columns, sum);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        std::printf("the kernel's sum: %llu, the CPU's: %llu\n", *sum, expected);
    }
    const bool summed = *sum == expected;
    ctx.claim(tutorial::documented(
        "kernel_follows_rows", "a kernel follows the row pointers to the CPU's values", summed,
        summed ? "the sums agree" : "the kernel did not sum them",
        "the kernel never ran on the table. First step: make every "
        "allocation of the table managed",
        tutorial::Entry{"Runtime API reference: cudaMallocManaged", "CPU GPUs", "is valid"}));
    CUDA_CHECK(cudaFree(sum));

    // The rows' addresses, read before free_table frees the array that holds them.
    std::vector<const int*> row_pointers(table, table + rows);
    free_table(table, rows);
    int left = is_managed(table) ? 1 : 0;
    for (const int* row : row_pointers) left += is_managed(row) ? 1 : 0;
    const bool freed = left == 0;
    ctx.claim(
        tutorial::documented("table_freed",
                             "free_table gives the table back: the row pointers and every row",
                             freed,
                             freed ? "CUDA no longer knows any of them"
                                   : std::to_string(left) + " of " + std::to_string(rows + 1) +
                                         " allocations still managed",
                             "an allocation is left. First step: cudaFree each row, then "
                             "the array of row pointers",
                             tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes",
                                             "cudaMemoryTypeUnregistered", "will"}));
    return ctx.verdict(summed && freed, summed ? "a kernel followed " + std::to_string(rows) +
                                                     " row pointers the CPU set"
                                               : "no kernel could follow the row pointers");
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex03_table",
        "Exercise (chapter 03_managed): a table of row pointers a kernel follows",
        {{"check", "make_table, free_table", {}, true, check}},
        {},
        "03_managed/exercises/table.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
