// Section first_touch: cudaMallocManaged reserves addresses, not memory. Pages appear where the
// data is first touched: device memory for a kernel, host memory for the CPU; a kernel touching
// the CPU's pages pulls them over. cudaMalloc's memory is there at once. Alone:
//   nvcc -std=c++17 -I. 03_managed/first_touch.cu common/standalone.cu -o build/first_touch
//   (or in 03_managed/: nvcc -std=c++17 -I.. first_touch.cu ../common/standalone.cu
//       -o ../build/first_touch)  (on the same line)
#include "common/check.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

// What the walkthrough found: the free device memory (cudaMemGetInfo) at the start and after
// each step, in bytes.
struct FreeMemory {
    std::size_t start, managed, gpu_touch, managed_2, cpu_touch, gpu_after_cpu, cuda_malloc, freed;
};

std::size_t free_device_memory() {
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    return free_bytes;
}

__global__ void touch(std::uint8_t* data, std::size_t bytes) {
    // One write per 4 KiB is enough to make every page exist.
    for (std::size_t i = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) * 4096;
         i < bytes; i += static_cast<std::size_t>(gridDim.x) * blockDim.x * 4096) {
        data[i] = 1;
    }
}

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step kernel_first{"a kernel touches a fresh buffer first"};
constexpr tutorial::Step cpu_first{"the CPU writes another fresh buffer first"};
constexpr tutorial::Step kernel_after_cpu{"a kernel touches the CPU's pages, they fault over"};

FreeMemory walkthrough(std::size_t bytes) {
    FreeMemory f{};
    f.start = free_device_memory();
    // 1. A managed allocation: addresses valid on the CPU and the GPU, and no memory behind them
    //    yet: physical memory is populated at the first touch (N.2.1.1).
    std::uint8_t* gpu_touched = nullptr;
    CUDA_CHECK(cudaMallocManaged(&gpu_touched, bytes));
    f.managed = free_device_memory();

    // 2. A kernel touches every page first: each is made in device memory as it faults.
    {
        const tutorial::During during(kernel_first);
        touch<<<256, 256>>>(gpu_touched, bytes);
        CUDA_CHECK_LAUNCH_SYNC();
    }
    f.gpu_touch = free_device_memory();

    // 3. A second buffer, touched first by the CPU: its pages are made in host memory.
    std::uint8_t* cpu_touched = nullptr;
    CUDA_CHECK(cudaMallocManaged(&cpu_touched, bytes));
    f.managed_2 = free_device_memory();
    {
        const tutorial::During during(cpu_first);
        std::memset(cpu_touched, 1, bytes);
    }
    f.cpu_touch = free_device_memory();

    // 4. A kernel touches the CPU's pages: each faults over to device memory.
    {
        const tutorial::During during(kernel_after_cpu);
        touch<<<256, 256>>>(cpu_touched, bytes);
        CUDA_CHECK_LAUNCH_SYNC();
    }
    f.gpu_after_cpu = free_device_memory();

    // 5. cudaMalloc, for comparison: its memory is there when the call returns.
    std::uint8_t* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    f.cuda_malloc = free_device_memory();
    CUDA_CHECK(cudaFree(device));
    CUDA_CHECK(cudaFree(cpu_touched));
    CUDA_CHECK(cudaFree(gpu_touched));
    f.freed = free_device_memory();
    return f;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::size_t bytes = std::size_t{256} << 20;
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const FreeMemory f = walkthrough(bytes);
    times.print();
    const auto mib = [](std::size_t before, std::size_t after) {
        return (static_cast<double>(before) - static_cast<double>(after)) / (1 << 20);
    };
    // The card's number: the device memory each touch took (cudaMemGetInfo before and after).
    // 256 MiB buffers, three of them held at the end; the card's run uses 1 GiB ones.
    std::printf(
        "256 MiB: %.0f MiB at the call, %.0f MiB at the kernel's touch, %.0f MiB at the "
        "CPU's touch, while cudaMalloc took %.0f MiB at once (cudaMemGetInfo)\n",
        mib(f.start, f.managed), mib(f.managed, f.gpu_touch), mib(f.managed_2, f.cpu_touch),
        mib(f.gpu_after_cpu, f.cuda_malloc));
    std::printf(
        "device memory taken, in MiB, by each step on 256 MiB buffers:\n"
        "cudaMallocManaged %.0f, a kernel's first touch %.0f, cudaMallocManaged %.0f,\n"
        "the CPU's first touch %.0f, a kernel on the CPU's pages %.0f, cudaMalloc %.0f\n",
        mib(f.start, f.managed), mib(f.managed, f.gpu_touch), mib(f.gpu_touch, f.managed_2),
        mib(f.managed_2, f.cpu_touch), mib(f.cpu_touch, f.gpu_after_cpu),
        mib(f.gpu_after_cpu, f.cuda_malloc));
    return 0;
}
#endif
