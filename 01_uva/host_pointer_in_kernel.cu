// Section host_pointer_in_kernel: under unified addressing a kernel can use a pinned host pointer
// as it is. Convenient, but every access crosses the host link: the same kernel reads it, then
// device memory, beside the copy engine moving the same bytes. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 01_uva/host_pointer_in_kernel.cu common/standalone.cu
//       -o build/host_pointer_in_kernel  (on the same line)
//   (or in 01_uva/: nvcc -std=c++17 -I.. host_pointer_in_kernel.cu ../common/standalone.cu
//       -o ../build/host_pointer_in_kernel)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"
#include "common/timing.hpp"

#include <cstdint>

namespace {

__global__ void double_plus_one(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = data[i] * 2 + 1;
    }
}

// The total a summing kernel left in *sum (it waits for the kernel), zeroed for the next one.
std::uint64_t take_sum(unsigned long long* sum) {
    unsigned long long total = 0;
    CUDA_CHECK(cudaMemcpy(&total, sum, sizeof total, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    return total;
}

// What the walkthrough found.
struct Found {
    std::size_t wrong = 0;      // values the kernel did not write right through the host pointer
    bool same_address = false;  // cudaHostGetDevicePointer returned the host pointer itself
    int sums_wrong = 0;         // reads (of `rounds` each way) whose sum was not the CPU's
};

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step copy_up{"the copy engine moves the bytes up (pinned cudaMemcpy)"};
constexpr tutorial::Step host_read{"a kernel reads pinned host memory, over the link"};
constexpr tutorial::Step device_read{"the same kernel reads the copy in device memory"};

Found walkthrough(std::size_t bytes, int rounds) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    Found found;
    // 1. Pinned host memory, filled by the CPU.
    std::uint32_t* host = nullptr;
    CUDA_CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocDefault));
    for (std::size_t i = 0; i < count; ++i) host[i] = static_cast<std::uint32_t>(i);

    // 2. A kernel writes through the pointer cudaHostAlloc returned, untranslated: with unified
    //    addressing, pinned host memory has the same address on the GPU.
    double_plus_one<<<256, 256>>>(host, count);
    CUDA_CHECK_LAUNCH_SYNC();  // the CPU may look only once the kernel has finished
    for (std::size_t i = 0; i < count; ++i)
        found.wrong += host[i] != static_cast<std::uint32_t>(i) * 2 + 1;
    void* device_view = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&device_view, host, 0));
    found.same_address = device_view == host;

    // 3. What that costs. The course's sum kernel (common/patterns.hpp) reads every byte once,
    //    16 bytes per load, and adds it all up, so that the reads cannot be optimised away and
    //    the result can be checked. It reads the pinned memory over the link, then a copy of it
    //    in device memory; the copy engine moving the same bytes up the same link is the
    //    yardstick. In turns, `rounds` times, so that a busy moment falls on all three.
    const std::uint64_t expected = sum_on_host(host, count);
    std::uint32_t* device = nullptr;
    unsigned long long* sum = nullptr;  // device memory: a managed sum would add page faults
    CUDA_CHECK(cudaMalloc(&device, bytes));
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    for (int round = 0; round < rounds; ++round) {
        {
            const tutorial::During during(copy_up);
            CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, nullptr));
        }
        {
            const tutorial::During during(host_read);
            sum_on_device_async(host, count, sum, nullptr);
        }
        found.sums_wrong += take_sum(sum) != expected;
        {
            const tutorial::During during(device_read);
            sum_on_device_async(device, count, sum, nullptr);
        }
        found.sums_wrong += take_sum(sum) != expected;
    }
    CUDA_CHECK(cudaFree(sum));
    CUDA_CHECK(cudaFree(device));
    CUDA_CHECK(cudaFreeHost(host));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>

int main() {
    constexpr std::size_t bytes = std::size_t{1} << 30;
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(bytes, 10);
    times.print();
    std::printf("A kernel wrote 1 GiB through the cudaHostAlloc pointer: %zu values wrong.\n",
                found.wrong);
    std::printf("cudaHostGetDevicePointer returned %s.\n",
                found.same_address ? "the same address" : "another address");
    std::printf(
        "The kernel summed the buffer over the link and in device memory, 10 times each: "
        "%d sums wrong.\n",
        found.sums_wrong);
    // The answer: how much faster the same kernel reads device memory than pinned host memory.
    const double host_ms = times.median_ms(host_read);
    const double device_ms = times.median_ms(device_read);
    const double copy_ms = times.median_ms(copy_up);
    std::printf("1 GiB: the kernel read device memory in %.3f ms (%.1f GB/s) and pinned host "
                "memory in %.3f ms (%.1f GB/s), %.3fx of a pinned copy's rate: device memory is "
                "%.1fx faster\n",
                device_ms, tutorial::gb_per_s(bytes, device_ms), host_ms,
                tutorial::gb_per_s(bytes, host_ms), copy_ms / host_ms, host_ms / device_ms);
    return found.wrong == 0 && found.sums_wrong == 0 ? 0 : 1;
}
#endif
