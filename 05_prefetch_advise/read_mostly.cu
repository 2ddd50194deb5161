// Section read_mostly: the CPU and a kernel take turns reading the same managed buffer. Without
// advice each read takes the pages away from the other side; cudaMemAdviseSetReadMostly lets
// both keep a read-only copy, until a write drops every copy but the writer's. Alone:
//   nvcc -std=c++17 -I. 05_prefetch_advise/read_mostly.cu common/standalone.cu -o build/read_mostly
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. read_mostly.cu ../common/standalone.cu
//       -o ../build/read_mostly)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>

namespace {

// The total a summing kernel left in *sum (it waits for the kernel), zeroed for the next one.
std::uint64_t take_sum(unsigned long long* sum) {
    unsigned long long total = 0;
    CUDA_CHECK(cudaMemcpy(&total, sum, sizeof total, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    return total;
}

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched. The
// turns taken without the advice ([0]) and with it ([1]), then the writes with it:
constexpr tutorial::Step writes_first[2] = {{"no advice: the CPU writes, prefetch to the GPU"},
                                            {"ReadMostly: the CPU writes, prefetch to the GPU"}};
constexpr tutorial::Step cpu_reads[2] = {{"no advice: the CPU reads"},
                                         {"ReadMostly: the CPU reads"}};
constexpr tutorial::Step kernel_reads[2] = {{"no advice: a kernel reads"},
                                            {"ReadMostly: a kernel reads"}};
constexpr tutorial::Step first_write{"ReadMostly: the CPU writes"};
constexpr tutorial::Step rewrite{"ReadMostly: the CPU writes again"};
constexpr tutorial::Step read_after{"ReadMostly: a kernel reads after the write"};

// What the walkthrough found: the attribute without the advice, with it, and after the write
// that dropped the copies; values read wrong.
struct Found {
    int without = 0, with = 0, after_write = 0;
    std::size_t wrong = 0;
};

// Defined below the walkthrough:
std::size_t take_turns(std::uint32_t* data, std::size_t count, int device, int rounds,
                       bool advised, unsigned long long* sum);
int read_mostly_attribute(const void* data, std::size_t bytes);

Found walkthrough(std::size_t bytes, int device, int rounds) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    Found found;
    unsigned long long* sum = nullptr;  // device memory: a managed sum would migrate too
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));

    // 1. No advice: the CPU's read faults the pages home, the kernel's faults them back.
    std::uint32_t* plain = nullptr;
    CUDA_CHECK(cudaMallocManaged(&plain, bytes));
    found.wrong += take_turns(plain, count, device, rounds, false, sum);
    found.without = read_mostly_attribute(plain, bytes);
    CUDA_CHECK(cudaFree(plain));

    // 2. ReadMostly: the prefetch makes a read-only copy on the GPU instead of moving the pages,
    //    so each side reads its own copy. The location is ignored for this advice.
    std::uint32_t* shared = nullptr;
    CUDA_CHECK(cudaMallocManaged(&shared, bytes));
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    CUDA_CHECK(cudaMemAdvise(shared, bytes, cudaMemAdviseSetReadMostly, gpu));
    found.wrong += take_turns(shared, count, device, rounds, true, sum);
    found.with = read_mostly_attribute(shared, bytes);

    // 3. The CPU writes: every copy but its own is dropped (the advice stays), so the first
    //    write pays for that and the same write again does not; the next kernel read copies the
    //    pages over again (it checks every value: a stale copy would show).
    {
        const tutorial::During during(first_write);
        fill_on_host(shared, count, 999);
    }
    {
        const tutorial::During during(rewrite);
        fill_on_host(shared, count, 999);
    }
    {
        const tutorial::During during(read_after);
        found.wrong += mismatches_on_device(shared, count, 999);
    }
    found.after_write = read_mostly_attribute(shared, bytes);
    CUDA_CHECK(cudaFree(shared));
    CUDA_CHECK(cudaFree(sum));
    return found;
}

// The Unified Memory appendix's loop on one buffer: the CPU writes it and it is prefetched to
// the GPU; then, `rounds` times, the CPU reads all of it and a kernel reads all of it. Returns
// the reads whose sum was wrong.
std::size_t take_turns(std::uint32_t* data, std::size_t count, int device, int rounds,
                       bool advised, unsigned long long* sum) {
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    const std::uint64_t expected = pattern_sum(count, 7);
    std::size_t wrong = 0;
    {
        const tutorial::During during(writes_first[advised]);
        fill_on_host(data, count, 7);
        CUDA_CHECK(cudaMemPrefetchAsync(data, count * sizeof *data, gpu, 0, nullptr));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    for (int r = 0; r < rounds; ++r) {
        {
            const tutorial::During during(cpu_reads[advised]);
            wrong += sum_on_host(data, count) != expected;
        }
        {
            const tutorial::During during(kernel_reads[advised]);
            sum_on_device_async(data, count, sum, nullptr);
        }
        wrong += take_sum(sum) != expected;
    }
    return wrong;
}

// Whether ReadMostly is set on the whole range (cudaMemRangeGetAttribute: 1 or 0).
int read_mostly_attribute(const void* data, std::size_t bytes) {
    int value = 0;
    CUDA_CHECK(cudaMemRangeGetAttribute(&value, sizeof value, cudaMemRangeAttributeReadMostly, data,
                                        bytes));
    return value;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    walkthrough(std::size_t{1} << 20, 0, 1);  // a warm-up: the first launch loads the kernel
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(std::size_t{64} << 20, 0, 10);
    times.print();
    std::printf("ReadMostly attribute: %d without the advice, %d with it, %d after the write\n",
                found.without, found.with, found.after_write);
    std::printf("%zu values read wrong\n", found.wrong);
    // The card's number: the kernel's reads without the advice against with it, and the first
    // CPU write after them against the same write again.
    const double without_ms = times.median_ms(kernel_reads[0]);
    const double with_ms = times.median_ms(kernel_reads[1]);
    std::printf("64 MiB, 10 rounds: %.3gx faster kernel reads with the advice (%.3f against %.3f "
                "ms); the first CPU write afterwards took %.3gx the same write again\n",
                without_ms / with_ms, with_ms, without_ms,
                times.median_host_ms(first_write) / times.median_host_ms(rewrite));
    return found.wrong == 0 ? 0 : 1;
}
#endif
