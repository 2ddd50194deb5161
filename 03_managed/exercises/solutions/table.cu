// Exercise ex03_table (chapter 03_managed), the course's solution: every allocation of the table
// managed, so that the row pointers the CPU stores are valid on the GPU too. The task is in
// ../table.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

int** make_table(int rows, int columns) {
    int** table = nullptr;
    CUDA_CHECK(cudaMallocManaged(&table, rows * sizeof(int*), cudaMemAttachGlobal));
    for (int r = 0; r < rows; ++r) {
        CUDA_CHECK(cudaMallocManaged(&table[r], columns * sizeof(int), cudaMemAttachGlobal));
    }
    return table;
}

void free_table(int** table, int rows) {
    for (int r = 0; r < rows; ++r) CUDA_CHECK(cudaFree(table[r]));
    CUDA_CHECK(cudaFree(table));
}
