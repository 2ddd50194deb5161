// Section properties: the device attributes that decide what prefetching and advice can do here,
// and the first two tried: a prefetch to the GPU, advice on malloc memory. (checks/properties.cpp
// predicts from each attribute and tries it.)
#include "common/check.hpp"

#include <cstddef>
#include <cstdlib>

namespace {

struct AdviceProperties {
    int concurrent_managed_access;            // pages migrate on demand; prefetches are allowed
    int pageable_memory_access;               // advice also applies to malloc memory
    int direct_managed_mem_access_from_host;  // the CPU reads GPU-resident pages in place
    int host_native_atomic_supported;
};

// Step 1. The properties that decide what prefetching and advice can do on this system.
AdviceProperties advice_properties(int device) {
    AdviceProperties p{};
    CUDA_CHECK(cudaDeviceGetAttribute(&p.concurrent_managed_access,
                                      cudaDevAttrConcurrentManagedAccess, device));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&p.pageable_memory_access, cudaDevAttrPageableMemoryAccess, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.direct_managed_mem_access_from_host,
                                      cudaDevAttrDirectManagedMemAccessFromHost, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.host_native_atomic_supported,
                                      cudaDevAttrHostNativeAtomicSupported, device));
    return p;
}

// Step 2. concurrentManagedAccess: the cudaMemPrefetchAsync entry accepts a GPU as the
// destination only where it is 1. Returns what the call returned (no CUDA_CHECK: a refusal is an
// answer here, not a failure).
cudaError_t try_prefetch_to_gpu(int device) {
    const std::size_t bytes = 1 << 20;
    void* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    const cudaError_t status = cudaMemPrefetchAsync(data, bytes, gpu, 0, nullptr);
    (void)cudaGetLastError();  // clear a refusal, so that the next check does not see it
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(data));
    return status;
}

// Step 3. pageableMemoryAccess: the cudaMemAdvise entry takes plain malloc memory, with a GPU as
// its preferred location, only where that GPU has it = 1; otherwise the call is refused.
cudaError_t try_advise_malloc(int device) {
    const std::size_t bytes = 1 << 20;
    void* data = std::malloc(bytes);
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    const cudaError_t status = cudaMemAdvise(data, bytes, cudaMemAdviseSetPreferredLocation, gpu);
    std::free(data);
    return status;
}

}  // namespace
