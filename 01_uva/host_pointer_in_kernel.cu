// Section host_pointer_in_kernel: under unified addressing a kernel can use a pinned host pointer
// as it is. Convenient, but every access crosses the host link: timed here against device memory
// (checks/host_pointer_in_kernel.cu compares the rates with each other and with the link's limit).
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <cstdint>
#include <vector>

namespace {

// What the CPU found after the kernel wrote through the host pointer.
struct Direct {
    std::size_t wrong;  // values not 2 * i + 1
    void* host;         // the pointer cudaHostAlloc returned
    void* device_view;  // what cudaHostGetDevicePointer says kernels should use
};

__global__ void double_plus_one(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = data[i] * 2 + 1;
    }
}

// Step 1. A kernel writes through the pointer cudaHostAlloc returned, untranslated: with unified
// addressing, pinned host memory has the same address on the GPU.
Direct write_through_host_pointer(std::size_t count) {
    Direct r{0, nullptr, nullptr};
    std::uint32_t* host = nullptr;
    CUDA_CHECK(cudaHostAlloc(&host, count * sizeof *host, cudaHostAllocDefault));
    for (std::size_t i = 0; i < count; ++i) host[i] = static_cast<std::uint32_t>(i);
    double_plus_one<<<256, 256>>>(host, count);
    CUDA_CHECK_LAUNCH_SYNC();  // the CPU may look only once the kernel has finished
    for (std::size_t i = 0; i < count; ++i)
        r.wrong += host[i] != static_cast<std::uint32_t>(i) * 2 + 1;
    CUDA_CHECK(cudaHostGetDevicePointer(&r.device_view, host, 0));
    CUDA_CHECK(cudaFreeHost(host));
    r.host = host;
    return r;
}

// Step 2. What that costs. The course's sum kernel (common/patterns.hpp) reads every byte once,
// 16 bytes per load, and adds everything up, so that the reads cannot be optimised away and the
// result can be checked; events time one pass. `sum` is device memory (a managed counter would
// add page faults); the last sum stays there.
double time_sum_once(const std::uint32_t* data, std::size_t bytes, unsigned long long* sum) {
    tutorial::EventTimer timer;
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    timer.start();
    sum_on_device_async(data, bytes / sizeof *data, sum, nullptr);
    timer.stop();
    return timer.elapsed_ms();
}

// The same kernel over pinned host memory and over device memory, and the copy engine moving the
// same bytes up the link: median milliseconds of `iters` rounds.
struct Measurement {
    double ms;
    unsigned long long sum;
};

struct Reads {
    Measurement over_host, over_device;
    double copy_ms;
    unsigned long long expected;  // the sum the CPU worked out
};

Reads time_reads(std::size_t bytes, int iters) {
    std::uint32_t* pinned = nullptr;
    std::uint32_t* device = nullptr;
    CUDA_CHECK(cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault));
    CUDA_CHECK(cudaMalloc(&device, bytes));
    unsigned long long expected = 0;
    for (std::size_t i = 0; i < bytes / sizeof *pinned; ++i) {
        pinned[i] = static_cast<std::uint32_t>(i % 1000);
        expected += pinned[i];
    }
    CUDA_CHECK(cudaMemcpy(device, pinned, bytes, cudaMemcpyDefault));

    // Three things timed in turns, round after round, so that a cold start or a busy moment
    // falls on all of them: the kernel over pinned memory, over device memory, and the yardstick
    // for "PCIe speed", the copy engine moving the same bytes up the same link.
    unsigned long long* sums = nullptr;
    CUDA_CHECK(cudaMalloc(&sums, 2 * sizeof *sums));
    const std::vector<tutorial::Spread> ms =
        tutorial::interleaved_ms(3, 1, iters, [&](std::size_t i) {
            if (i == 0) return time_sum_once(pinned, bytes, &sums[0]);
            if (i == 1) return time_sum_once(device, bytes, &sums[1]);
            tutorial::EventTimer timer;
            timer.start();
            CUDA_CHECK(cudaMemcpyAsync(device, pinned, bytes, cudaMemcpyDefault, nullptr));
            timer.stop();
            return timer.elapsed_ms();
        });
    unsigned long long last_sums[2] = {};
    CUDA_CHECK(cudaMemcpy(last_sums, sums, sizeof last_sums, cudaMemcpyDeviceToHost));
    const Reads r{
        {ms[0].median, last_sums[0]}, {ms[1].median, last_sums[1]}, ms[2].median, expected};
    CUDA_CHECK(cudaFree(sums));
    CUDA_CHECK(cudaFree(device));
    CUDA_CHECK(cudaFreeHost(pinned));
    return r;
}

}  // namespace
