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

namespace {

enum class Prefetch { none, to_gpu, to_host };
enum class Where { host, gpu };

// One case: whether a preferred location is set and where, who writes the data first, whether
// a prefetch follows, and who reads it then. Its steps, each one timed wherever steps are
// watched: the prefetch (where the case has one), the same full read twice, and where the CPU
// reads, a kernel's read after it ({}: the case has no such step).
struct Case {
    const char* name;
    bool prefer;            // set a preferred location at all
    Where preferred;        // where
    bool gpu_writes_first;  // else the CPU writes the data first
    Prefetch prefetch;      // a prefetch after the writes
    bool gpu_reads;         // else the CPU reads
    tutorial::Step prefetched, first_read, second_read, kernel_after;
};

constexpr int case_count = 7;
constexpr Case cases[case_count] = {
    // The GPU reads what the CPU wrote: without advice its faults migrate the pages; with the
    // host preferred they map them where they are; a prefetch moves them all the same.
    {"no advice, CPU writes, GPU reads", false, Where::host, false, Prefetch::none, true,
     {},
     {"no advice, CPU writes, GPU reads: the 1st read"},
     {"no advice, CPU writes, GPU reads: the 2nd read"},
     {}},
    {"preferred host, CPU writes, GPU reads", true, Where::host, false, Prefetch::none, true,
     {},
     {"preferred host, CPU writes, GPU reads: the 1st read"},
     {"preferred host, CPU writes, GPU reads: the 2nd read"},
     {}},
    {"preferred host, prefetch to GPU, GPU reads", true, Where::host, false, Prefetch::to_gpu,
     true,
     {"preferred host, prefetch to GPU, GPU reads: the prefetch"},
     {"preferred host, prefetch to GPU, GPU reads: the 1st read"},
     {"preferred host, prefetch to GPU, GPU reads: the 2nd read"},
     {}},
    // The CPU reads what the GPU wrote: with the GPU preferred, a CPU that cannot map GPU
    // memory (directManagedMemAccessFromHost = 0) still brings the pages home.
    {"no advice, GPU writes, CPU reads", false, Where::gpu, true, Prefetch::none, false,
     {},
     {"no advice, GPU writes, CPU reads: the 1st read"},
     {"no advice, GPU writes, CPU reads: the 2nd read"},
     {"no advice, GPU writes, CPU reads: then a kernel reads"}},
    {"preferred GPU, GPU writes, CPU reads", true, Where::gpu, true, Prefetch::none, false,
     {},
     {"preferred GPU, GPU writes, CPU reads: the 1st read"},
     {"preferred GPU, GPU writes, CPU reads: the 2nd read"},
     {"preferred GPU, GPU writes, CPU reads: then a kernel reads"}},
    {"no advice, GPU writes, prefetch to host, CPU reads", false, Where::gpu, true,
     Prefetch::to_host, false,
     {"no advice, GPU writes, prefetch to host, CPU reads: the prefetch"},
     {"no advice, GPU writes, prefetch to host, CPU reads: the 1st read"},
     {"no advice, GPU writes, prefetch to host, CPU reads: the 2nd read"},
     {"no advice, GPU writes, prefetch to host, CPU reads: then a kernel reads"}},
    {"no advice, CPU writes, CPU reads", false, Where::gpu, false, Prefetch::none, false,
     {},
     {"no advice, CPU writes, CPU reads: the 1st read"},
     {"no advice, CPU writes, CPU reads: the 2nd read"},
     {"no advice, CPU writes, CPU reads: then a kernel reads"}},
};

// What one case found.
struct Seen {
    const char* name = "";
    int preferred = 0, last_prefetch = 0;  // the two attributes after the reads
    std::size_t wrong = 0;                 // reads whose sum was wrong
};

struct Found {
    Seen cases[case_count];
};

// Defined below the walkthrough:
Seen run_case(const Case& c, std::size_t bytes, int device, unsigned long long* sum);
void set_up(const Case& c, std::uint32_t* data, std::size_t count, int device);
std::size_t read_all(const tutorial::Step& step, bool by_gpu, const std::uint32_t* data,
                     std::size_t count, std::uint64_t expected, unsigned long long* sum);
int location_attribute(const void* data, std::size_t bytes, cudaMemRangeAttribute attribute);

Found walkthrough(std::size_t bytes, int device) {
    unsigned long long* sum = nullptr;  // device memory: a managed sum would migrate too
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    Found found;
    for (int i = 0; i < case_count; ++i) found.cases[i] = run_case(cases[i], bytes, device, sum);
    CUDA_CHECK(cudaFree(sum));
    return found;
}

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
    seen.wrong += read_all(c.first_read, c.gpu_reads, data, count, expected, sum);
    seen.wrong += read_all(c.second_read, c.gpu_reads, data, count, expected, sum);
    if (!c.gpu_reads) seen.wrong += read_all(c.kernel_after, true, data, count, expected, sum);
    seen.preferred = location_attribute(data, bytes, cudaMemRangeAttributePreferredLocation);
    seen.last_prefetch = location_attribute(data, bytes, cudaMemRangeAttributeLastPrefetchLocation);
    CUDA_CHECK(cudaFree(data));
    return seen;
}

// Step 1. A case's set-up on a fresh buffer: the preferred location (if the case sets one), the
// first writes, then a prefetch (if any).
void set_up(const Case& c, std::uint32_t* data, std::size_t count, int device) {
    const std::size_t bytes = count * sizeof *data;
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    const cudaMemLocation host{cudaMemLocationTypeHost, 0};
    if (c.prefer) {
        const cudaMemLocation preferred = c.preferred == Where::gpu ? gpu : host;
        CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetPreferredLocation, preferred));
    }
    if (c.gpu_writes_first) {
        fill_on_device(data, count, 11);
    } else {
        fill_on_host(data, count, 11);
    }
    if (c.prefetch != Prefetch::none) {
        const cudaMemLocation to = c.prefetch == Prefetch::to_gpu ? gpu : host;
        const tutorial::During during(c.prefetched);
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, to, 0, nullptr));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
}

// The total a summing kernel left in *sum (it waits for the kernel), zeroed for the next one.
std::uint64_t take_sum(unsigned long long* sum) {
    unsigned long long total = 0;
    CUDA_CHECK(cudaMemcpy(&total, sum, sizeof total, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    return total;
}

// Step 2. One full read, by a kernel or by the CPU, as the step `step`. Returns 1 if its sum
// was not `expected`.
std::size_t read_all(const tutorial::Step& step, bool by_gpu, const std::uint32_t* data,
                     std::size_t count, std::uint64_t expected, unsigned long long* sum) {
    std::uint64_t got = 0;
    if (by_gpu) {
        {
            const tutorial::During during(step);
            sum_on_device_async(data, count, sum, nullptr);
        }
        got = take_sum(sum);
    } else {
        const tutorial::During during(step);
        got = sum_on_host(data, count);
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

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::size_t bytes = std::size_t{256} << 20;
    walkthrough(std::size_t{1} << 20, 0);  // a warm-up: the first launches load the kernels
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    std::size_t wrong = 0;
    Found found;
    for (int round = 0; round < 3; ++round) {  // three rounds: the answer is their medians
        found = walkthrough(bytes, 0);
        for (const Seen& seen : found.cases) wrong += seen.wrong;
    }
    times.print();
    for (const Seen& seen : found.cases) {  // the last round's
        std::printf("%-52s PreferredLocation %2d, LastPrefetchLocation %2d, %zu sums wrong\n",
                    seen.name, seen.preferred, seen.last_prefetch, seen.wrong);
    }
    std::printf("%zu sums wrong in the 3 rounds\n", wrong);
    // The card's number: the GPU's second read with the host preferred against one without
    // advice (case 1 against case 0), as rates: GB = 1e9 bytes over the kernel's time.
    const double gb = static_cast<double>(bytes) / 1e9;
    const double unadvised_gbps = gb / (times.median_ms(cases[0].second_read) / 1e3);
    const double host_preferred_gbps = gb / (times.median_ms(cases[1].second_read) / 1e3);
    std::printf("256 MiB: %.1fx slower: with the host preferred the GPU's second read still "
                "crossed the link (%.1f GB/s), where without advice the pages had moved and it "
                "read them at %.1f GB/s\n",
                unadvised_gbps / host_preferred_gbps, host_preferred_gbps, unadvised_gbps);
    return wrong == 0 ? 0 : 1;
}
#endif
