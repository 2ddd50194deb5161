// Exercise ex03_table (chapter 03_managed): a structure of pointers that a kernel can follow.
//
// A table of rows, each row its own allocation, is an array of row pointers. With cudaMalloc a
// kernel could use it only after a "deep copy": every row copied to the GPU, then an array of the
// new row addresses built and copied too. With managed memory the CPU builds the table once, and
// the same pointers work on the GPU. Rewrite make_table() and free_table() so that a kernel can
// read table[r][c].
//
// The check (exercises/check/table.cu) makes a 64 x 1000 table, writes table[r][c] = r * 1000 + c
// on the CPU, and passes when
//   - the array of row pointers and every row are managed memory,
//   - its own kernel, following the pointers, sums exactly what the CPU wrote,
//   - free_table() gives every allocation back.
// Run it: cmake --build build --target ex03_table && ./build/bin/ex03_table
//    or:  ctest --preset exercise -R 03_managed
#include "common/check.hpp"

#include <cuda_runtime.h>

int** make_table(int rows, int columns) {
    // TODO 1: allocate the array of row pointers with cudaMallocManaged (rows * sizeof(int*)),
    // TODO 2: ...and each row with cudaMallocManaged (columns * sizeof(int)).
    int** table = new int*[rows];
    for (int r = 0; r < rows; ++r) table[r] = new int[columns];
    return table;
}

void free_table(int** table, int rows) {
    // TODO 3: cudaFree each row, then the array of row pointers.
    for (int r = 0; r < rows; ++r) delete[] table[r];
    delete[] table;
}
