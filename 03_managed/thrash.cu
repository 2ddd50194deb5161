// Section thrash: the CPU and the GPU take turns writing managed memory. On the same page, the
// page migrates back and forth every round; on separate pages it stays where it is used.
// (checks/thrash.cu counts what the driver moved in the first rounds, then times every case.)
#include "common/check.hpp"

#include <cstddef>

namespace {

// Far enough apart that the two addresses never share a page, whatever page size the driver
// uses for managed memory (4 KiB on the CPU, up to 2 MiB on the GPU).
constexpr std::size_t far_apart = (4 << 20) / sizeof(int);

// Step 1. One managed buffer for both sides: the CPU writes element 0, the GPU element 1 (the
// same page) or element far_apart (a page of its own). The caller frees it with cudaFree.
int* shared_buffer() {
    int* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, (far_apart + 1) * sizeof(int)));
    data[0] = -1;
    return data;
}

__global__ void gpu_write(int* where, int value) {
    *where = value;
}

// Step 2. One round: the CPU writes element 0 of managed `data`, then a kernel writes element
// `gpu_index` and the host waits for it. Where both elements share a page, that page moves to the
// CPU and back to the GPU every round.
void one_round(int* data, std::size_t gpu_index, bool cpu_writes, int r) {
    if (cpu_writes) data[0] = r;
    gpu_write<<<1, 1>>>(data + gpu_index, 2 * r + 1);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
