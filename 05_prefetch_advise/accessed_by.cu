// Section accessed_by: the Unified Memory appendix's write/read/append program (N.1.7 Hardware
// Coherency) with cudaMemAdviseSetAccessedBy for the CPU, then the same advice for a GPU.
// (checks/accessed_by.cu times each step with and without the advice and counts what moved.)
#include "common/check.hpp"

#include <cstddef>

namespace {

constexpr int a = 10;
constexpr int b = 100;

__global__ void write(int* ret, int a, int b, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        ret[i] = a + b + i;
    }
}

__global__ void append(int* ret, int a, int b, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        ret[i] += a + b + i;
    }
}

// Step 1. The appendix's buffer: managed memory, optionally advised to be accessed by the host.
// The advice asks that the pages stay mapped for the CPU wherever they live, as far as a mapping
// can be made; what that buys depends on directManagedMemAccessFromHost (Programming Guide,
// N.1.7). With 1, the CPU's reads between the kernels below reach GPU memory in place and nothing
// migrates. With 0, the CPU cannot map GPU memory: its reads still fault and migrate the pages to
// the host, and the append faults them back (the cudaMemAdvise entry, too, warns that a CPU
// access may migrate the pages to host memory).
int* allocate_ret(int n, bool hint) {
    int* ret = nullptr;
    CUDA_CHECK(cudaMallocManaged(&ret, n * sizeof(int)));
    if (hint) {
        const cudaMemLocation host{cudaMemLocationTypeHost, 0};
        CUDA_CHECK(cudaMemAdvise(ret, n * sizeof(int), cudaMemAdviseSetAccessedBy, host));
    }
    return ret;
}

// Step 2. A kernel writes ret: its pages are created in GPU memory.
void write_ret(int* ret, int n) {
    write<<<1024, 256>>>(ret, a, b, n);
    CUDA_CHECK_LAUNCH();
}

// Step 3. The CPU reads every value (the appendix prints them); returns how many are not a + b + i.
int read_ret_on_cpu(const int* ret, int n) {
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += ret[i] != a + b + i;
    return wrong;
}

// Step 4. A kernel appends a + b + i: it finds the pages on the GPU, or faults them back.
void append_ret(int* ret, int n) {
    append<<<1024, 256>>>(ret, a, b, n);
    CUDA_CHECK_LAUNCH();
}

// Step 5. The GPU side of the same advice: pages the CPU wrote, which a kernel only reads now and
// then. AccessedBy(GPU) maps them into the GPU's page tables where they are, so the kernel reads
// them over the link and they stay in host memory (the cudaMemAdvise entry: the advice moves
// nothing, and keeps the mapping as long as the data's location allows one).
void map_for_gpu(const void* data, std::size_t bytes, int device) {
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetAccessedBy, gpu));
}

// Reading the advice back: whether the AccessedBy attribute lists the host. The entry promises
// a list of device ids, padded with cudaInvalidDeviceId (-2); how the host appears in it, the
// entry does not say: driver 580 lists it as cudaCpuDeviceId (-1).
bool host_in_accessed_by(const void* data, std::size_t bytes) {
    int who[4] = {};
    CUDA_CHECK(
        cudaMemRangeGetAttribute(who, sizeof who, cudaMemRangeAttributeAccessedBy, data, bytes));
    for (int location : who) {
        if (location == cudaCpuDeviceId) return true;
    }
    return false;
}

}  // namespace
