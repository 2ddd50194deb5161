// Section preferred_location: cudaMemAdviseSetPreferredLocation says where pages should live. It
// moves nothing itself: it changes what the next fault does (map the pages where they are, if
// the faulting side can), and a prefetch still moves them. Seven cases, each read twice. Alone:
//   nvcc -std=c++17 -I. 05_prefetch_advise/preferred_location.cu common/standalone.cu
//       -o build/preferred_location  (on the same line)
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. preferred_location.cu
//       ../common/standalone.cu -o ../build/preferred_location)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

namespace {

enum class Prefetch { none, to_gpu, to_host };

// One case: whether a preferred location is set and where, who writes the data first, whether
// a prefetch follows, and who reads it then.
struct Case {
    const char* name;
    bool prefer;                // set a preferred location at all
    cudaMemLocation preferred;  // where
    bool gpu_writes_first;      // else the CPU writes the data first
    Prefetch prefetch;          // a prefetch after the writes
    bool gpu_reads;             // else the CPU reads
};

// The total a summing kernel left in *sum (it waits for the kernel), zeroed for the next one.
std::uint64_t take_sum(unsigned long long* sum) {
    unsigned long long total = 0;
    CUDA_CHECK(cudaMemcpy(&total, sum, sizeof total, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    return total;
}

// Step 1. A case's set-up on a fresh buffer: the preferred location (if the case sets one), the
// first writes, then a prefetch (if any).
void set_up(const Case& c, std::uint32_t* data, std::size_t count, int device) {
    const std::size_t bytes = count * sizeof *data;
    if (c.prefer) {
        CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetPreferredLocation, c.preferred));
    }
    if (c.gpu_writes_first) {
        fill_on_device(data, count, 11);
    } else {
        fill_on_host(data, count, 11);
    }
    if (c.prefetch != Prefetch::none) {
        const cudaMemLocation to = c.prefetch == Prefetch::to_gpu
                                       ? cudaMemLocation{cudaMemLocationTypeDevice, device}
                                       : cudaMemLocation{cudaMemLocationTypeHost, 0};
        const std::string step = std::string(c.name) + ": the prefetch";
        tutorial::step(step.c_str());
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, to, 0, nullptr));
        CUDA_CHECK(cudaDeviceSynchronize());
        tutorial::step_end();
    }
}

// Step 2. One full read, by a kernel or by the CPU, named "<case>: <which>". Returns 1 if its
// sum was not `expected`.
std::size_t read_all(const Case& c, bool by_gpu, const char* which, const std::uint32_t* data,
                     std::size_t count, std::uint64_t expected, unsigned long long* sum) {
    const std::string step = std::string(c.name) + ": " + which;
    tutorial::step(step.c_str());
    std::uint64_t got = 0;
    if (by_gpu) {
        sum_on_device_async(data, count, sum, nullptr);
        tutorial::step_end();
        got = take_sum(sum);
    } else {
        got = sum_on_host(data, count);
        tutorial::step_end();
    }
    return got != expected;
}

// Step 3. Where the range's pages should live and where they were last prefetched to: a device
// ordinal, cudaCpuDeviceId (-1) for the host or cudaInvalidDeviceId (-2) for none.
int location_attribute(const void* data, std::size_t bytes, cudaMemRangeAttribute attribute) {
    int location = 0;
    CUDA_CHECK(cudaMemRangeGetAttribute(&location, sizeof location, attribute, data, bytes));
    return location;
}

// What one case found.
struct Seen {
    const char* name = "";
    int preferred = 0, last_prefetch = 0;  // the two attributes after the reads
    std::size_t wrong = 0;                 // reads whose sum was wrong
};

// A case from start to end: a fresh buffer, its set-up, the same full read twice by the side
// the case names (and where that is the CPU, a kernel's read after it), the attributes.
Seen run_case(const Case& c, std::size_t bytes, int device, unsigned long long* sum) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    set_up(c, data, count, device);
    const std::uint64_t expected = pattern_sum(count, 11);
    Seen seen;
    seen.name = c.name;
    seen.wrong += read_all(c, c.gpu_reads, "the 1st read", data, count, expected, sum);
    seen.wrong += read_all(c, c.gpu_reads, "the 2nd read", data, count, expected, sum);
    if (!c.gpu_reads) {
        seen.wrong += read_all(c, true, "then a kernel reads", data, count, expected, sum);
    }
    seen.preferred = location_attribute(data, bytes, cudaMemRangeAttributePreferredLocation);
    seen.last_prefetch = location_attribute(data, bytes, cudaMemRangeAttributeLastPrefetchLocation);
    CUDA_CHECK(cudaFree(data));
    return seen;
}

constexpr int case_count = 7;

struct Found {
    Seen cases[case_count];
};

Found walkthrough(std::size_t bytes, int device) {
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    const cudaMemLocation host{cudaMemLocationTypeHost, 0};
    const Case cases[case_count] = {
        // The GPU reads what the CPU wrote: without advice its faults migrate the pages; with
        // the host preferred they map them where they are; a prefetch moves them all the same.
        {"no advice, CPU writes, GPU reads", false, host, false, Prefetch::none, true},
        {"preferred host, CPU writes, GPU reads", true, host, false, Prefetch::none, true},
        {"preferred host, prefetch to GPU, GPU reads", true, host, false, Prefetch::to_gpu, true},
        // The CPU reads what the GPU wrote: with the GPU preferred, a CPU that cannot map GPU
        // memory (directManagedMemAccessFromHost = 0) still brings the pages home.
        {"no advice, GPU writes, CPU reads", false, gpu, true, Prefetch::none, false},
        {"preferred GPU, GPU writes, CPU reads", true, gpu, true, Prefetch::none, false},
        {"no advice, GPU writes, prefetch to host, CPU reads", false, gpu, true, Prefetch::to_host,
         false},
        {"no advice, CPU writes, CPU reads", false, gpu, false, Prefetch::none, false},
    };
    unsigned long long* sum = nullptr;  // device memory: a managed sum would migrate too
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    Found found;
    for (int i = 0; i < case_count; ++i) found.cases[i] = run_case(cases[i], bytes, device, sum);
    CUDA_CHECK(cudaFree(sum));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(std::size_t{64} << 20, 0);
    times.print();
    std::size_t wrong = 0;
    for (const Seen& seen : found.cases) {
        std::printf("%-52s PreferredLocation %2d, LastPrefetchLocation %2d, %zu sums wrong\n",
                    seen.name, seen.preferred, seen.last_prefetch, seen.wrong);
        wrong += seen.wrong;
    }
    return wrong == 0 ? 0 : 1;
}
#endif
