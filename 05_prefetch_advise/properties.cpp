// Section properties: what can prefetching and advice do on this device? Four attributes decide
// it; the walkthrough reads them, then does what each one allows: a prefetch to the GPU, a CPU
// read of GPU-resident pages, advice on plain malloc memory. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 05_prefetch_advise/properties.cpp common/standalone.cu -o build/properties
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. properties.cpp ../common/standalone.cu
//       -o ../build/properties)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

// What the walkthrough found: the attributes, and what each call it tried returned.
struct Found {
    int concurrent_managed_access = 0;            // pages migrate on demand; GPU prefetches allowed
    int pageable_memory_access = 0;               // advice also takes plain malloc memory
    int direct_managed_mem_access_from_host = 0;  // the CPU reaches GPU-resident pages in place
    int host_native_atomic_supported = 0;         // CPU and GPU atomics on the same pages
    cudaError_t prefetch = cudaSuccess;           // the prefetch to the GPU (where allowed)
    cudaError_t advise_malloc = cudaSuccess;      // advice on malloc memory (where allowed)
    std::size_t wrong = 0;                        // sums read wrong
};

// Advice on plain malloc memory: a GPU as its preferred location. The cudaMemAdvise entry takes
// such memory where that GPU has pageableMemoryAccess = 1; for a GPU without it, it names no
// outcome, so the status returned is the answer.
cudaError_t try_advise_malloc(int device) {
    const std::size_t bytes = 1 << 20;
    void* data = std::malloc(bytes);
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    const cudaError_t status = cudaMemAdvise(data, bytes, cudaMemAdviseSetPreferredLocation, gpu);
    std::free(data);
    return status;
}

// The total a summing kernel left in *sum (it waits for the kernel), zeroed for the next one.
std::uint64_t take_sum(unsigned long long* sum) {
    unsigned long long total = 0;
    CUDA_CHECK(cudaMemcpy(&total, sum, sizeof total, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    return total;
}

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step resident_read{"a kernel reads GPU-resident pages"};
constexpr tutorial::Step read_after_cpu{"the kernel again, after the CPU's read"};

Found walkthrough(std::size_t bytes, int device) {
    Found f;
    // 1. The four attributes.
    CUDA_CHECK(cudaDeviceGetAttribute(&f.concurrent_managed_access,
                                      cudaDevAttrConcurrentManagedAccess, device));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&f.pageable_memory_access, cudaDevAttrPageableMemoryAccess, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&f.direct_managed_mem_access_from_host,
                                      cudaDevAttrDirectManagedMemAccessFromHost, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&f.host_native_atomic_supported,
                                      cudaDevAttrHostNativeAtomicSupported, device));

    // 2. concurrentManagedAccess = 1: a GPU may be a prefetch's destination. Without it, managed
    //    memory moves as a whole at each launch and nothing below applies.
    if (f.concurrent_managed_access == 1) {
        const std::size_t count = bytes / sizeof(std::uint32_t);
        const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
        const cudaMemLocation host{cudaMemLocationTypeHost, 0};
        unsigned long long* sum = nullptr;  // device memory: a managed sum would fault too
        CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
        CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
        std::uint32_t* data = nullptr;
        CUDA_CHECK(cudaMallocManaged(&data, bytes));
        fill_on_host(data, count, 6);
        f.prefetch = cudaMemPrefetchAsync(data, bytes, gpu, 0, nullptr);
        (void)cudaGetLastError();  // a refusal is the answer here, not a failure
        CUDA_CHECK(cudaDeviceSynchronize());

        // 3. The CPU reads GPU-resident pages, with the hint that asks for direct access (the
        //    Guide's N.1.7 example). directManagedMemAccessFromHost = 1: it reads them in place;
        //    0: its faults take them home, and the next kernel faults them back.
        CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetAccessedBy, host));
        {
            const tutorial::During during(resident_read);
            sum_on_device_async(data, count, sum, nullptr);
        }
        f.wrong += take_sum(sum) != pattern_sum(count, 6);
        f.wrong += sum_on_host(data, count) != pattern_sum(count, 6);  // the CPU reads
        {
            const tutorial::During during(read_after_cpu);
            sum_on_device_async(data, count, sum, nullptr);
        }
        f.wrong += take_sum(sum) != pattern_sum(count, 6);
        CUDA_CHECK(cudaFree(data));
        CUDA_CHECK(cudaFree(sum));
    }

    // 4. pageableMemoryAccess = 1: advice takes plain malloc memory too.
    if (f.pageable_memory_access == 1) f.advise_malloc = try_advise_malloc(device);
    return f;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    walkthrough(std::size_t{64} << 20, 0);  // a warm-up: the first launch loads the kernel
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    Found f;
    std::size_t wrong = 0;
    for (int round = 0; round < 3; ++round) {  // three rounds: the answer is their medians
        f = walkthrough(std::size_t{64} << 20, 0);
        wrong += f.wrong;
    }
    times.print();
    std::printf("concurrentManagedAccess = %d: a prefetch to the GPU returned %s\n",
                f.concurrent_managed_access, cudaGetErrorName(f.prefetch));
    std::printf("directManagedMemAccessFromHost = %d, hostNativeAtomicSupported = %d\n",
                f.direct_managed_mem_access_from_host, f.host_native_atomic_supported);
    std::printf("pageableMemoryAccess = %d: advice on malloc memory %s\n",
                f.pageable_memory_access,
                f.pageable_memory_access == 1 ? cudaGetErrorName(f.advise_malloc) : "not tried");
    std::printf("%zu sums read wrong in the 3 rounds\n", wrong);
    // The card's number: the kernel's read after the CPU's against the one before it (both
    // run only where concurrentManagedAccess = 1).
    if (f.concurrent_managed_access == 1) {
        std::printf("64 MiB: after the CPU's read the next kernel's read took %.1fx a resident "
                    "one\n",
                    times.median_ms(read_after_cpu) / times.median_ms(resident_read));
    }
    return wrong == 0 ? 0 : 1;
}
#endif
