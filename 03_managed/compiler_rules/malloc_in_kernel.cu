// Build test: cudaMallocManaged is a host function; device code cannot allocate managed memory
// (it has malloc and new, which allocate from the device heap instead). nvcc refuses this file.
#include <cuda_runtime.h>

__global__ void kernel(int** out) {
    cudaMallocManaged(out, sizeof(int));
}
