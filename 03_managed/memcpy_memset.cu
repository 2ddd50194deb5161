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

// The walkthrough's steps: each call as a step of its own, waited for, then the other processor
// reading the whole buffer it left; each one timed wherever steps are watched.
struct CallSteps {
    tutorial::Step call;  // the copy or the memsets, until the device is done with them
    tutorial::Step read;  // the processor N.2.2.7 does not name for the call reads it all
};
constexpr CallSteps out_host_to_host{{"a HostToHost copy out of managed memory"},
                                     {"a kernel reads the HostToHost source"}};
constexpr CallSteps out_host_to_device{{"a HostToDevice copy out of managed memory"},
                                       {"a kernel reads the HostToDevice source"}};
constexpr CallSteps in_host_to_host{{"a HostToHost copy into managed memory"},
                                    {"a kernel reads the HostToHost destination"}};
constexpr CallSteps in_device_to_host{{"a DeviceToHost copy into managed memory"},
                                      {"a kernel reads the DeviceToHost destination"}};
constexpr CallSteps out_device_to_host{{"a DeviceToHost copy out of managed memory"},
                                       {"the CPU reads the DeviceToHost source"}};
constexpr CallSteps out_device_to_device{{"a DeviceToDevice copy out of managed memory"},
                                         {"the CPU reads the DeviceToDevice source"}};
constexpr CallSteps in_host_to_device{{"a HostToDevice copy into managed memory"},
                                      {"the CPU reads the HostToDevice destination"}};
constexpr CallSteps in_device_to_device{{"a DeviceToDevice copy into managed memory"},
                                        {"the CPU reads the DeviceToDevice destination"}};
constexpr CallSteps in_default{{"a Default copy into managed memory"},
                               {"the CPU reads the Default destination"}};
constexpr CallSteps out_default{{"a Default copy out of managed memory"},
                                {"the CPU reads the Default source"}};
constexpr CallSteps memsets{{"two memsets fill managed memory"},
                            {"the CPU reads what the memsets set"}};

// The buffers every call uses: `count` values, and the two pinned buffers on the other side.
struct Buffers {
    std::size_t count, bytes;
    std::uint32_t* from_pinned;  // holds seed 7's pattern
    std::uint32_t* to_pinned;
};

// The reads after a call, below the walkthrough; each returns the values read wrong.
std::size_t kernel_reads_all(const tutorial::Step& step, std::uint32_t* managed, std::size_t count,
                             std::uint32_t seed, const std::uint32_t* copy = nullptr);
std::size_t cpu_reads_all(const tutorial::Step& step, std::uint32_t* managed, std::size_t count,
                          std::uint32_t seed, const std::uint32_t* copy = nullptr);
std::size_t cpu_reads_set(const tutorial::Step& step, std::uint32_t* managed, std::size_t count);
// N.2.2.7's parts, in its order, below the walkthrough.
void the_host_reaches(const Buffers& b, Found& found);
void the_device_reaches(const Buffers& b, Found& found);
void default_kind_and_memsets(const Buffers& b, Found& found);

Found walkthrough(std::size_t count) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    // The other buffer is pinned host memory: both processors reach it at the same address. For
    // pointers that do not match the kind, the cudaMemcpy entry calls the result undefined.
    std::uint32_t* from_pinned = nullptr;
    std::uint32_t* to_pinned = nullptr;
    CUDA_CHECK(cudaMallocHost(&from_pinned, bytes));
    CUDA_CHECK(cudaMallocHost(&to_pinned, bytes));
    fill_on_host(from_pinned, count, 7);
    const Buffers b{count, bytes, from_pinned, to_pinned};
    Found found;
    the_host_reaches(b, found);          // 1. and 2.: HostTo* and *ToHost
    the_device_reaches(b, found);        // 3. and 4.: DeviceTo* and *ToDevice
    default_kind_and_memsets(b, found);  // 5. and 6.: cudaMemcpyDefault, cudaMemset*
    CUDA_CHECK(cudaFreeHost(to_pinned));
    CUDA_CHECK(cudaFreeHost(from_pinned));
    return found;
}

// Each call is waited for in its own step (cudaMemcpy may return before a copy is done: device
// to device, for one; N.2.2.7: before the CPU touches the data); then the other processor reads.
void the_host_reaches(const Buffers& b, Found& found) {
    // 1. cudaMemcpyHostTo* with a managed source: the host reads it where it may do so coherently
    //    in the copy's stream (always, where concurrentManagedAccess = 1), else the device does.
    std::uint32_t* m = written_by_cpu(b.count, 1);
    {
        const tutorial::During during(out_host_to_host.call);
        CUDA_CHECK(cudaMemcpy(b.to_pinned, m, b.bytes, cudaMemcpyHostToHost));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    found.copied_wrong += kernel_reads_all(out_host_to_host.read, m, b.count, 1, b.to_pinned);
    m = written_by_cpu(b.count, 2);
    {
        const tutorial::During during(out_host_to_device.call);
        CUDA_CHECK(cudaMemcpy(b.to_pinned, m, b.bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    found.as_device_wrong += kernel_reads_all(out_host_to_device.read, m, b.count, 2, b.to_pinned);

    // 2. cudaMemcpy*ToHost with a managed destination: the same rule, so the host writes it.
    m = fresh(b.count);
    {
        const tutorial::During during(in_host_to_host.call);
        CUDA_CHECK(cudaMemcpy(m, b.from_pinned, b.bytes, cudaMemcpyHostToHost));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    found.copied_wrong += kernel_reads_all(in_host_to_host.read, m, b.count, 7);
    m = fresh(b.count);
    {
        const tutorial::During during(in_device_to_host.call);
        CUDA_CHECK(cudaMemcpy(m, b.from_pinned, b.bytes, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    found.as_device_wrong += kernel_reads_all(in_device_to_host.read, m, b.count, 7);
}

void the_device_reaches(const Buffers& b, Found& found) {
    // 3. cudaMemcpyDeviceTo* with a managed source: the device reads it (or the call fails).
    std::uint32_t* m = written_by_cpu(b.count, 3);
    {
        const tutorial::During during(out_device_to_host.call);
        CUDA_CHECK(cudaMemcpy(b.to_pinned, m, b.bytes, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    found.copied_wrong += cpu_reads_all(out_device_to_host.read, m, b.count, 3, b.to_pinned);
    m = written_by_cpu(b.count, 4);
    {
        const tutorial::During during(out_device_to_device.call);
        CUDA_CHECK(cudaMemcpy(b.to_pinned, m, b.bytes, cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    found.as_device_wrong += cpu_reads_all(out_device_to_device.read, m, b.count, 4, b.to_pinned);

    // 4. cudaMemcpy*ToDevice with a managed destination: the same rule, so the device writes it.
    m = fresh(b.count);
    {
        const tutorial::During during(in_host_to_device.call);
        CUDA_CHECK(cudaMemcpy(m, b.from_pinned, b.bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    found.copied_wrong += cpu_reads_all(in_host_to_device.read, m, b.count, 7);
    m = fresh(b.count);
    {
        const tutorial::During during(in_device_to_device.call);
        CUDA_CHECK(cudaMemcpy(m, b.from_pinned, b.bytes, cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    found.as_device_wrong += cpu_reads_all(in_device_to_device.read, m, b.count, 7);
}

void default_kind_and_memsets(const Buffers& b, Found& found) {
    // 5. cudaMemcpyDefault: the device, unless it cannot reach the data coherently (or the data
    //    prefers the CPU and the host can): here the device, both ways.
    std::uint32_t* m = fresh(b.count);
    {
        const tutorial::During during(in_default.call);
        CUDA_CHECK(cudaMemcpy(m, b.from_pinned, b.bytes, cudaMemcpyDefault));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    found.copied_wrong += cpu_reads_all(in_default.read, m, b.count, 7);
    m = written_by_cpu(b.count, 5);
    {
        const tutorial::During during(out_default.call);
        CUDA_CHECK(cudaMemcpy(b.to_pinned, m, b.bytes, cudaMemcpyDefault));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    found.copied_wrong += cpu_reads_all(out_default.read, m, b.count, 5, b.to_pinned);

    // 6. cudaMemset*: always the device. Both may return before they are done, so the program
    //    synchronizes before the CPU touches the data.
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    m = fresh(b.count);
    {
        const tutorial::During during(memsets.call);
        CUDA_CHECK(cudaMemset(m, 0xab, b.count / 2 * sizeof *m));
        CUDA_CHECK(
            cudaMemsetAsync(m + b.count / 2, 0xab, (b.count - b.count / 2) * sizeof *m, stream));
        CUDA_CHECK(cudaDeviceSynchronize());  // both: the default stream's memset and `stream`'s
    }
    found.set_wrong = cpu_reads_set(memsets.read, m, b.count);
    CUDA_CHECK(cudaStreamDestroy(stream));
}

// The step after a call: the processor it did not use for the managed side reads all of it,
// which pulls over the pages the call left on the other side; then the buffer is freed. Each
// returns the values that are not `seed`'s pattern, in the buffer and in `copy`, where the call
// copied it to (checked on the CPU after the step). mismatches_on_device waits for its kernel.
std::size_t kernel_reads_all(const tutorial::Step& step, std::uint32_t* managed, std::size_t count,
                             std::uint32_t seed, const std::uint32_t* copy) {
    std::size_t wrong = 0;
    {
        const tutorial::During during(step);
        wrong = mismatches_on_device(managed, count, seed);
    }
    CUDA_CHECK(cudaFree(managed));
    return wrong + (copy != nullptr ? mismatches_on_host(copy, count, seed) : 0);
}

std::size_t cpu_reads_all(const tutorial::Step& step, std::uint32_t* managed, std::size_t count,
                          std::uint32_t seed, const std::uint32_t* copy) {
    std::size_t wrong = 0;
    {
        const tutorial::During during(step);
        wrong = mismatches_on_host(managed, count, seed);
    }
    CUDA_CHECK(cudaFree(managed));
    return wrong + (copy != nullptr ? mismatches_on_host(copy, count, seed) : 0);
}

// The same after the memsets: the words that are not 0xabababab.
std::size_t cpu_reads_set(const tutorial::Step& step, std::uint32_t* managed, std::size_t count) {
    std::size_t wrong = 0;
    {
        const tutorial::During during(step);
        for (std::size_t i = 0; i < count; ++i) wrong += managed[i] != 0xababababu;
    }
    CUDA_CHECK(cudaFree(managed));
    return wrong;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(std::size_t{16} << 20);  // 64 MiB buffers
    std::printf("6 copies whose kind fits the pinned buffer: %zu values read wrong\n",
                found.copied_wrong);
    times.print();
    // The card's number is what the reads moved, which the driver's counters count (CUPTI): in
    // the chapter's program. Alone, the time of the two reads shows it.
    std::printf(
        "64 MiB: a kernel's read after HostToHost took %.2f ms, the CPU's read after "
        "HostToDevice %.2f ms (the bytes they moved: ./build/bin/03_managed "
        "memcpy_memset)\n",
        times.median_host_ms(in_host_to_host.read), times.median_host_ms(in_host_to_device.read));
    std::printf("4 whose kind names it device memory: %zu values read wrong\n",
                found.as_device_wrong);
    std::printf("cudaMemset and cudaMemsetAsync: %zu words read wrong\n", found.set_wrong);
    return found.copied_wrong + found.set_wrong == 0 ? 0 : 1;
}
#endif
