// Section memcpy_memset: cudaMemcpy and cudaMemset on managed memory, in the order of the Unified
// Memory appendix's N.2.2.7: the kind says whether the CPU or the GPU reaches the managed side,
// cudaMemset always uses the GPU. After each call the other processor reads the buffer. Alone:
//   nvcc -std=c++17 -I. 03_managed/memcpy_memset.cu common/standalone.cu -o build/memcpy_memset
//   (or in 03_managed/: nvcc -std=c++17 -I.. memcpy_memset.cu ../common/standalone.cu
//       -o ../build/memcpy_memset)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>

namespace {

// What the walkthrough found: values read wrong after the copies, and after the memsets.
struct Found {
    std::size_t copied_wrong = 0;     // after the 6 copies whose kind fits the pinned buffer
    std::size_t as_device_wrong = 0;  // after the 4 whose kind names it device memory
    std::size_t set_wrong = 0;
};

// A fresh managed buffer: none of its pages exists until something touches it.
std::uint32_t* fresh(std::size_t count) {
    std::uint32_t* managed = nullptr;
    CUDA_CHECK(cudaMallocManaged(&managed, count * sizeof(std::uint32_t)));
    return managed;
}

// A fresh managed buffer the CPU fills first: its pages are made in host memory.
std::uint32_t* written_by_cpu(std::size_t count, std::uint32_t seed) {
    std::uint32_t* managed = fresh(count);
    fill_on_host(managed, count, seed);
    return managed;
}

// The step after a call: first wait for the call (cudaMemcpy may return before a copy is done:
// device to device, for one), then the processor it did not use for the managed side reads all
// of it, which pulls over the pages the call left on the other side; then the buffer is freed.
// Each returns the values that are not `seed`'s pattern, in the buffer and in `copy`, where the
// call copied it to (checked on the CPU after the step). mismatches_on_device waits for its kernel.
std::size_t kernel_reads_all(const char* step, std::uint32_t* managed, std::size_t count,
                             std::uint32_t seed, const std::uint32_t* copy = nullptr) {
    CUDA_CHECK(cudaDeviceSynchronize());
    tutorial::step(step);
    const std::size_t wrong = mismatches_on_device(managed, count, seed);
    tutorial::step_end();
    CUDA_CHECK(cudaFree(managed));
    return wrong + (copy != nullptr ? mismatches_on_host(copy, count, seed) : 0);
}

std::size_t cpu_reads_all(const char* step, std::uint32_t* managed, std::size_t count,
                          std::uint32_t seed, const std::uint32_t* copy = nullptr) {
    CUDA_CHECK(cudaDeviceSynchronize());  // N.2.2.7: before the CPU touches the data
    tutorial::step(step);
    const std::size_t wrong = mismatches_on_host(managed, count, seed);
    tutorial::step_end();
    CUDA_CHECK(cudaFree(managed));
    return wrong + (copy != nullptr ? mismatches_on_host(copy, count, seed) : 0);
}

// The same after the memsets: the words that are not 0xabababab.
std::size_t cpu_reads_set(const char* step, std::uint32_t* managed, std::size_t count) {
    tutorial::step(step);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) wrong += managed[i] != 0xababababu;
    tutorial::step_end();
    CUDA_CHECK(cudaFree(managed));
    return wrong;
}

Found walkthrough(std::size_t count) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    std::size_t wrong = 0;      // read wrong after a copy whose kind fits the pinned buffer
    std::size_t as_device = 0;  // ...after one whose kind names it device memory (four)
    // The other buffer is pinned host memory: both processors reach it at the same address. For
    // pointers that do not match the kind, the cudaMemcpy entry calls the result undefined.
    std::uint32_t* from_pinned = nullptr;
    std::uint32_t* to_pinned = nullptr;
    CUDA_CHECK(cudaMallocHost(&from_pinned, bytes));
    CUDA_CHECK(cudaMallocHost(&to_pinned, bytes));
    fill_on_host(from_pinned, count, 7);
    std::uint32_t* m = nullptr;

    // 1. cudaMemcpyHostTo* with a managed source: the host reads it where it may do so coherently
    //    in the copy's stream (always, where concurrentManagedAccess = 1), else the device does.
    m = written_by_cpu(count, 1);
    tutorial::step("cudaMemcpy(pinned, managed, HostToHost)");
    CUDA_CHECK(cudaMemcpy(to_pinned, m, bytes, cudaMemcpyHostToHost));
    wrong += kernel_reads_all("a kernel reads the HostToHost source", m, count, 1, to_pinned);
    m = written_by_cpu(count, 2);
    tutorial::step("cudaMemcpy(pinned, managed, HostToDevice)");
    CUDA_CHECK(cudaMemcpy(to_pinned, m, bytes, cudaMemcpyHostToDevice));
    as_device += kernel_reads_all("a kernel reads the HostToDevice source", m, count, 2, to_pinned);

    // 2. cudaMemcpy*ToHost with a managed destination: the same rule, so the host writes it.
    m = fresh(count);
    tutorial::step("cudaMemcpy(managed, pinned, HostToHost)");
    CUDA_CHECK(cudaMemcpy(m, from_pinned, bytes, cudaMemcpyHostToHost));
    wrong += kernel_reads_all("a kernel reads the HostToHost destination", m, count, 7);
    m = fresh(count);
    tutorial::step("cudaMemcpy(managed, pinned, DeviceToHost)");
    CUDA_CHECK(cudaMemcpy(m, from_pinned, bytes, cudaMemcpyDeviceToHost));
    as_device += kernel_reads_all("a kernel reads the DeviceToHost destination", m, count, 7);

    // 3. cudaMemcpyDeviceTo* with a managed source: the device reads it (or the call fails).
    m = written_by_cpu(count, 3);
    tutorial::step("cudaMemcpy(pinned, managed, DeviceToHost)");
    CUDA_CHECK(cudaMemcpy(to_pinned, m, bytes, cudaMemcpyDeviceToHost));
    wrong += cpu_reads_all("the CPU reads the DeviceToHost source", m, count, 3, to_pinned);
    m = written_by_cpu(count, 4);
    tutorial::step("cudaMemcpy(pinned, managed, DeviceToDevice)");
    CUDA_CHECK(cudaMemcpy(to_pinned, m, bytes, cudaMemcpyDeviceToDevice));
    as_device += cpu_reads_all("the CPU reads the DeviceToDevice source", m, count, 4, to_pinned);

    // 4. cudaMemcpy*ToDevice with a managed destination: the same rule, so the device writes it.
    m = fresh(count);
    tutorial::step("cudaMemcpy(managed, pinned, HostToDevice)");
    CUDA_CHECK(cudaMemcpy(m, from_pinned, bytes, cudaMemcpyHostToDevice));
    wrong += cpu_reads_all("the CPU reads the HostToDevice destination", m, count, 7);
    m = fresh(count);
    tutorial::step("cudaMemcpy(managed, pinned, DeviceToDevice)");
    CUDA_CHECK(cudaMemcpy(m, from_pinned, bytes, cudaMemcpyDeviceToDevice));
    as_device += cpu_reads_all("the CPU reads the DeviceToDevice destination", m, count, 7);

    // 5. cudaMemcpyDefault: the device, unless it cannot reach the data coherently (or the data
    //    prefers the CPU and the host can): here the device, both ways.
    m = fresh(count);
    tutorial::step("cudaMemcpy(managed, pinned, Default)");
    CUDA_CHECK(cudaMemcpy(m, from_pinned, bytes, cudaMemcpyDefault));
    wrong += cpu_reads_all("the CPU reads the Default destination", m, count, 7);
    m = written_by_cpu(count, 5);
    tutorial::step("cudaMemcpy(pinned, managed, Default)");
    CUDA_CHECK(cudaMemcpy(to_pinned, m, bytes, cudaMemcpyDefault));
    wrong += cpu_reads_all("the CPU reads the Default source", m, count, 5, to_pinned);

    // 6. cudaMemset*: always the device. Both may return before they are done, so the program
    //    synchronizes before the CPU touches the data.
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    m = fresh(count);
    tutorial::step("cudaMemset and cudaMemsetAsync(managed)");
    CUDA_CHECK(cudaMemset(m, 0xab, count / 2 * sizeof *m));
    CUDA_CHECK(cudaMemsetAsync(m + count / 2, 0xab, (count - count / 2) * sizeof *m, stream));
    CUDA_CHECK(cudaDeviceSynchronize());  // both: the default stream's memset and `stream`'s
    const std::size_t set_wrong = cpu_reads_set("the CPU reads what the memsets set", m, count);
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFreeHost(to_pinned));
    CUDA_CHECK(cudaFreeHost(from_pinned));
    return {wrong, as_device, set_wrong};
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(std::size_t{4} << 20);  // 16 MiB buffers
    std::printf("6 copies whose kind fits the pinned buffer: %zu values read wrong\n",
                found.copied_wrong);
    times.print();
    std::printf("4 whose kind names it device memory: %zu values read wrong\n",
                found.as_device_wrong);
    std::printf("cudaMemset and cudaMemsetAsync: %zu words read wrong\n", found.set_wrong);
    return found.copied_wrong + found.set_wrong == 0 ? 0 : 1;
}
#endif
