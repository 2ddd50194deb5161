// Section fault_vs_prefetch: how much does a page fault cost? The same managed bytes reach the
// GPU by page faults, by cudaMemPrefetchAsync and (the baseline) by cudaMemcpy from pinned
// memory, then come back to the CPU by faults or by a prefetch. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 05_prefetch_advise/fault_vs_prefetch.cu common/standalone.cu
//       -o build/fault_vs_prefetch  (on the same line)
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. fault_vs_prefetch.cu ../common/standalone.cu
//       -o ../build/fault_vs_prefetch)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>

namespace {

// What the walkthrough found: values a reader got wrong, in all its reads (0 when right).
struct Found {
    std::size_t wrong = 0;
};

// The total a summing kernel left in *sum (it waits for the kernel), zeroed for the next one.
std::uint64_t take_sum(unsigned long long* sum) {
    unsigned long long total = 0;
    CUDA_CHECK(cudaMemcpy(&total, sum, sizeof total, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    return total;
}

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step faulting_read{"a kernel reads, pages fault in"};
constexpr tutorial::Step prefetch_there{"a prefetch moves the pages to the GPU first"};
constexpr tutorial::Step resident_read{"the kernel reads resident pages"};
constexpr tutorial::Step pinned_copy{"the baseline: a copy from pinned memory to the GPU"};
constexpr tutorial::Step faulting_cpu_read{"the CPU reads, pages fault back"};
constexpr tutorial::Step prefetch_home{"a prefetch brings the pages home first"};
constexpr tutorial::Step resident_cpu_read{"the CPU reads resident pages"};

Found walkthrough(std::size_t bytes, int device) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    const cudaMemLocation host{cudaMemLocationTypeHost, 0};
    Found found;
    unsigned long long* sum = nullptr;  // device memory: a managed sum would fault too
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));

    // 1. The CPU writes a managed buffer first: its pages are made in host memory.
    std::uint32_t* managed = nullptr;
    CUDA_CHECK(cudaMallocManaged(&managed, bytes));
    fill_on_host(managed, count, 3);

    // 2. A kernel reads it as it is: each missing page stops the kernel while the driver moves
    //    it (and a few around it) over.
    {
        const tutorial::During during(faulting_read);
        sum_on_device_async(managed, count, sum, nullptr);
    }
    found.wrong += take_sum(sum) != pattern_sum(count, 3);

    // 3. The pages go home again; this time a prefetch moves the whole range first, in large
    //    copies, and the kernel after it finds every page in place.
    CUDA_CHECK(cudaMemPrefetchAsync(managed, bytes, host, 0, nullptr));
    {
        const tutorial::During during(prefetch_there);
        CUDA_CHECK(cudaMemPrefetchAsync(managed, bytes, gpu, 0, nullptr));
    }
    {
        const tutorial::During during(resident_read);
        sum_on_device_async(managed, count, sum, nullptr);
    }
    found.wrong += take_sum(sum) != pattern_sum(count, 3);

    // 4. The baseline: the same bytes copied from pinned host memory to device memory.
    std::uint32_t* pinned = nullptr;
    std::uint32_t* on_device = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    CUDA_CHECK(cudaMalloc(&on_device, bytes));
    fill_on_host(pinned, count, 3);
    {
        const tutorial::During during(pinned_copy);
        CUDA_CHECK(cudaMemcpy(on_device, pinned, bytes, cudaMemcpyHostToDevice));
    }
    found.wrong += mismatches_on_device(on_device, count, 3);
    CUDA_CHECK(cudaFree(on_device));
    CUDA_CHECK(cudaFreeHost(pinned));

    // 5. Back the other way: a kernel writes new values (the pages are on the GPU now), and the
    //    CPU reads them: each page faults back to host memory.
    fill_on_device(managed, count, 4);
    {
        const tutorial::During during(faulting_cpu_read);
        found.wrong += mismatches_on_host(managed, count, 4);
    }

    // 6. Again with a prefetch home first: the CPU then reads pages that are already local.
    fill_on_device(managed, count, 5);
    {
        const tutorial::During during(prefetch_home);
        CUDA_CHECK(cudaMemPrefetchAsync(managed, bytes, host, 0, nullptr));
        CUDA_CHECK(cudaStreamSynchronize(nullptr));  // the CPU reads only once the pages are home
    }
    {
        const tutorial::During during(resident_cpu_read);
        found.wrong += mismatches_on_host(managed, count, 5);
    }

    CUDA_CHECK(cudaFree(managed));
    CUDA_CHECK(cudaFree(sum));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    walkthrough(std::size_t{8} << 20, 0);  // a warm-up: the first launches load the kernels
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    std::size_t wrong = 0;
    for (int round = 0; round < 5; ++round) {  // five rounds: the answer is their medians
        wrong += walkthrough(std::size_t{512} << 20, 0).wrong;
    }
    times.print();
    std::printf("512 MiB to the GPU and back, six ways, 5 times: %zu values read wrong\n", wrong);
    // The card's number: the faulting read against the prefetch, the copy beside them, and the
    // same two ways back home.
    const double faults_ms = times.median_ms(faulting_read);
    const double prefetch_ms = times.median_ms(prefetch_there);
    std::printf("512 MiB: the faulting read took %.2f ms, the prefetch %.2f ms: %.1fx; the pinned "
                "cudaMemcpy %.2f ms; back home the prefetch was %.2fx sooner than the CPU's "
                "faults\n",
                faults_ms, prefetch_ms, faults_ms / prefetch_ms, times.median_ms(pinned_copy),
                times.median_host_ms(faulting_cpu_read) / times.median_ms(prefetch_home));
    return wrong == 0 ? 0 : 1;
}
#endif
