// Section accessed_by: the Unified Memory appendix's write/read/append program (N.1.7 Hardware
// Coherency), without and with cudaMemAdviseSetAccessedBy for the CPU; then the same advice for
// a GPU, on pages the CPU wrote. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 05_prefetch_advise/accessed_by.cu common/standalone.cu -o build/accessed_by
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. accessed_by.cu ../common/standalone.cu
//       -o ../build/accessed_by)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>

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

// Whether the AccessedBy attribute lists the host. The cudaMemRangeGetAttribute entry promises
// a list of device ids, padded with cudaInvalidDeviceId (-2); how the host appears in it, the
// entry does not say: this looks for cudaCpuDeviceId (-1).
bool host_in_accessed_by(const void* data, std::size_t bytes) {
    int who[4] = {};
    CUDA_CHECK(
        cudaMemRangeGetAttribute(who, sizeof who, cudaMemRangeAttributeAccessedBy, data, bytes));
    for (int location : who) {
        if (location == cudaCpuDeviceId) return true;
    }
    return false;
}

// The appendix's program on n ints, with or without the hint for the CPU. The hint asks that the
// pages stay mapped for the CPU wherever they live, as far as a mapping can be made: where the
// CPU reaches GPU memory in place (directManagedMemAccessFromHost = 1) nothing migrates; where
// it cannot (0), its reads still fault the pages home, and the append faults them back.
// Returns the values read wrong; `listed` says whether the attribute named the host.
std::size_t write_read_append(int n, bool hint, bool& listed) {
    int* ret = nullptr;
    CUDA_CHECK(cudaMallocManaged(&ret, n * sizeof(int)));
    if (hint) {
        const cudaMemLocation host{cudaMemLocationTypeHost, 0};
        CUDA_CHECK(cudaMemAdvise(ret, n * sizeof(int), cudaMemAdviseSetAccessedBy, host));
    }
    listed = host_in_accessed_by(ret, n * sizeof(int));
    std::size_t wrong = 0;
    tutorial::step(hint ? "AccessedBy(host): write<<<...>>>" : "no advice: write<<<...>>>");
    write<<<1024, 256>>>(ret, a, b, n);  // the pages are populated in GPU memory
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    tutorial::step(hint ? "AccessedBy(host): the CPU reads every value"
                        : "no advice: the CPU reads every value");
    for (int i = 0; i < n; ++i) wrong += ret[i] != a + b + i;  // the appendix prints them
    tutorial::step(hint ? "AccessedBy(host): append<<<...>>>" : "no advice: append<<<...>>>");
    append<<<1024, 256>>>(ret, a, b, n);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    tutorial::step_end();
    for (int i = 0; i < n; ++i) wrong += ret[i] != 2 * (a + b + i);
    CUDA_CHECK(cudaFree(ret));
    return wrong;
}

// The GPU side of the same advice: pages the CPU wrote, which a kernel only reads now and then.
// AccessedBy(GPU) maps them into the GPU's page tables where they are, so the kernel reads them
// over the link (the cudaMemAdvise entry: the advice itself moves nothing). Only where access
// counters are on may the driver still move pages the GPU reads often (the Guide, N.1.8).
// Returns the sums read wrong.
std::size_t gpu_reads_host_pages(std::size_t bytes, int device, bool advise) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    fill_on_host(data, count, 13);  // the pages are made in host memory
    if (advise) {
        const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
        CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetAccessedBy, gpu));
    }
    std::size_t wrong = 0;
    tutorial::step(advise ? "AccessedBy(GPU): a kernel reads CPU-written pages"
                          : "no advice: a kernel reads CPU-written pages");
    wrong += sum_on_device(data, count) != pattern_sum(count, 13);
    if (advise) {
        tutorial::step("AccessedBy(GPU): the kernel again");
        wrong += sum_on_device(data, count) != pattern_sum(count, 13);
    }
    tutorial::step_end();
    CUDA_CHECK(cudaFree(data));
    return wrong;
}

// What the walkthrough found: whether the AccessedBy attribute named the host, without and with
// the hint ([hint]), and the values read wrong.
struct Found {
    bool host_listed[2] = {};
    std::size_t wrong = 0;
};

Found walkthrough(int n, int device) {
    Found found;
    // 1. The appendix's program without the hint, then with it.
    for (const bool hint : {false, true}) {
        found.wrong += write_read_append(n, hint, found.host_listed[hint]);
    }
    // 2. The advice for a GPU: a kernel reads CPU-written pages without it (its faults migrate
    //    them), then with it (twice).
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(int);
    for (const bool advise : {false, true}) {
        found.wrong += gpu_reads_host_pages(bytes, device, advise);
    }
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(16 << 20, 0);  // 64 MiB of ints
    std::printf("AccessedBy lists the host: %s with the hint, %s without\n",
                found.host_listed[1] ? "yes" : "no", found.host_listed[0] ? "yes" : "no");
    times.print();
    std::printf("%zu values read wrong\n", found.wrong);
    return found.wrong == 0 ? 0 : 1;
}
#endif
