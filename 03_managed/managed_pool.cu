// Section managed_pool: managed memory from a stream-ordered pool (CUDA 13): the default managed
// pool, an allocation that migrates like any managed memory, and a free that keeps it pooled.
// checks/managed_pool.cu counts what moved and judges it.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace {

__global__ void write_values(std::uint32_t* data, std::size_t count, std::uint32_t add) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = static_cast<std::uint32_t>(i) + add;
    }
}

// Step 1. The default managed pool: location type None, no preferred location for its memory.
// A system without managed pools says so: cudaErrorNotSupported (returned, not checked here).
cudaError_t default_managed_pool(cudaMemPool_t* pool) {
    cudaMemLocation no_preference{cudaMemLocationTypeNone, 0};
    return cudaMemGetDefaultMemPool(pool, &no_preference, cudaMemAllocationTypeManaged);
}

// Step 1b. The pool keeps what is freed into it only up to its release threshold, and the
// default pool's threshold is 0: at the next synchronize it gives freed memory back to the
// system. This is the process's default pool, shared by all its code: raise the threshold so
// that it keeps everything, and return the old value, to put back when done.
std::uint64_t keep_freed_memory_in_pool(cudaMemPool_t pool) {
    std::uint64_t before = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &before));
    std::uint64_t keep_all = UINT64_MAX;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
    return before;
}

// Step 2. Allocate in stream order: one pointer for CPU and GPU, as from cudaMallocManaged.
std::uint32_t* allocate(cudaMemPool_t pool, std::size_t bytes, cudaStream_t stream) {
    void* data = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&data, bytes, pool, stream));
    return static_cast<std::uint32_t*>(data);
}

// Step 3. A kernel writes it; once the stream is done the CPU may read it (its pages follow).
void gpu_writes(std::uint32_t* data, std::size_t count, cudaStream_t stream) {
    write_values<<<256, 256, 0, stream>>>(data, count, 1);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Step 4. Bring the pages back to the GPU ahead of the next kernel, as for any managed memory.
void prefetch_to_gpu(std::uint32_t* data, std::size_t bytes, int device, cudaStream_t stream) {
    cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Step 5. Free in stream order: back to the pool, which keeps it (step 1b's threshold); trimming
// gives what no allocation uses back to the system.
void release(std::uint32_t* data, cudaStream_t stream) {
    CUDA_CHECK(cudaFreeAsync(data, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

void trim(cudaMemPool_t pool) {
    CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
}

// Step 6. A managed pool of one's own. The cudaMemLocationTypeNone entry speaks of creating
// managed pools, but the cudaMemPoolProps entry still says allocType must be Pinned: try it,
// and keep what the driver answered.
cudaError_t create_managed_pool(int device, cudaMemPool_t* pool) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypeManaged;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;  // preferred location: this GPU
    props.location.id = device;
    return cudaMemPoolCreate(pool, &props);
}

}  // namespace
