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
    tutorial::step("a kernel reads, pages fault in");
    sum_on_device_async(managed, count, sum, nullptr);
    tutorial::step_end();
    found.wrong += take_sum(sum) != pattern_sum(count, 3);

    // 3. The pages go home again; this time a prefetch moves the whole range first, in large
    //    copies, and the kernel after it finds every page in place.
    CUDA_CHECK(cudaMemPrefetchAsync(managed, bytes, host, 0, nullptr));
    tutorial::step("cudaMemPrefetchAsync to the GPU");
    CUDA_CHECK(cudaMemPrefetchAsync(managed, bytes, gpu, 0, nullptr));
    tutorial::step("the kernel reads resident pages");
    sum_on_device_async(managed, count, sum, nullptr);
    tutorial::step_end();
    found.wrong += take_sum(sum) != pattern_sum(count, 3);

    // 4. The baseline: the same bytes copied from pinned host memory to device memory.
    std::uint32_t* pinned = nullptr;
    std::uint32_t* on_device = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    CUDA_CHECK(cudaMalloc(&on_device, bytes));
    fill_on_host(pinned, count, 3);
    tutorial::step("cudaMemcpy pinned -> device");
    CUDA_CHECK(cudaMemcpy(on_device, pinned, bytes, cudaMemcpyHostToDevice));
    tutorial::step_end();
    found.wrong += mismatches_on_device(on_device, count, 3);
    CUDA_CHECK(cudaFree(on_device));
    CUDA_CHECK(cudaFreeHost(pinned));

    // 5. Back the other way: a kernel writes new values (the pages are on the GPU now), and the
    //    CPU reads them: each page faults back to host memory.
    fill_on_device(managed, count, 4);
    tutorial::step("the CPU reads, pages fault back");
    found.wrong += mismatches_on_host(managed, count, 4);
    tutorial::step_end();

    // 6. Again with a prefetch home first: the CPU then reads pages that are already local.
    fill_on_device(managed, count, 5);
    tutorial::step("cudaMemPrefetchAsync to the host");
    CUDA_CHECK(cudaMemPrefetchAsync(managed, bytes, host, 0, nullptr));
    CUDA_CHECK(cudaStreamSynchronize(nullptr));  // the CPU reads only once the pages are home
    tutorial::step("the CPU reads resident pages");
    found.wrong += mismatches_on_host(managed, count, 5);
    tutorial::step_end();

    CUDA_CHECK(cudaFree(managed));
    CUDA_CHECK(cudaFree(sum));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(std::size_t{64} << 20, 0);
    times.print();
    std::printf("64 MiB to the GPU and back, six ways: %zu values read wrong\n", found.wrong);
    return found.wrong == 0 ? 0 : 1;
}
#endif
