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

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched. The
// appendix's program without the hint for the CPU ([0]) and with it ([1]):
constexpr tutorial::Step kernel_writes[2] = {
    {"no advice: a kernel writes (write<<<...>>>)"},
    {"AccessedBy(host): a kernel writes (write<<<...>>>)"}};
constexpr tutorial::Step cpu_reads[2] = {
    {"no advice: the CPU reads every value"},
    {"AccessedBy(host): the CPU reads every value"}};
constexpr tutorial::Step kernel_appends[2] = {
    {"no advice: a kernel appends (append<<<...>>>)"},
    {"AccessedBy(host): a kernel appends (append<<<...>>>)"}};
// ...then a kernel reading CPU-written pages without advice ([0]), with AccessedBy(GPU) ([1]):
constexpr tutorial::Step gpu_reads[2] = {
    {"no advice: a kernel reads CPU-written pages"},
    {"AccessedBy(GPU): a kernel reads CPU-written pages"}};
constexpr tutorial::Step gpu_reads_again{"AccessedBy(GPU): the kernel again"};

// What the walkthrough found: whether the AccessedBy attribute named the host, without and with
// the hint ([hint]), and the values read wrong.
struct Found {
    bool host_listed[2] = {};
    std::size_t wrong = 0;
};

// Defined below the walkthrough:
std::size_t write_read_append(int n, bool hint, bool& listed);
std::size_t gpu_reads_host_pages(std::size_t bytes, int device, bool advise);
bool host_in_accessed_by(const void* data, std::size_t bytes);

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
    {
        const tutorial::During during(kernel_writes[hint]);
        write<<<1024, 256>>>(ret, a, b, n);  // the pages are populated in GPU memory
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    {
        const tutorial::During during(cpu_reads[hint]);
        for (int i = 0; i < n; ++i) wrong += ret[i] != a + b + i;  // the appendix prints them
    }
    {
        const tutorial::During during(kernel_appends[hint]);
        append<<<1024, 256>>>(ret, a, b, n);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaDeviceSynchronize());
    }
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
    {
        const tutorial::During during(gpu_reads[advise]);
        wrong += sum_on_device(data, count) != pattern_sum(count, 13);
    }
    if (advise) {
        const tutorial::During during(gpu_reads_again);
        wrong += sum_on_device(data, count) != pattern_sum(count, 13);
    }
    CUDA_CHECK(cudaFree(data));
    return wrong;
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

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    walkthrough(1 << 18, 0);  // a warm-up: the first launches load the kernels
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    Found found;
    std::size_t wrong = 0;
    for (int round = 0; round < 5; ++round) {  // five rounds: the answer is their medians
        found = walkthrough(64 << 20, 0);      // 256 MiB of ints
        wrong += found.wrong;
    }
    std::printf("AccessedBy lists the host: %s with the hint, %s without\n",
                found.host_listed[1] ? "yes" : "no", found.host_listed[0] ? "yes" : "no");
    times.print();
    std::printf("%zu values read wrong in the 5 rounds\n", wrong);
    // The card's number: the append without the hint for the CPU against with it.
    const double without_ms = times.median_ms(kernel_appends[0]);
    const double with_ms = times.median_ms(kernel_appends[1]);
    std::printf("256 MiB of ints: the append without the hint / with it: %.3gx (%.2f against "
                "%.2f ms); what the CPU's read and the append moved, the driver's count: "
                "./build/bin/05_prefetch_advise accessed_by\n",
                without_ms / with_ms, without_ms, with_ms);
    return wrong == 0 ? 0 : 1;
}
#endif
