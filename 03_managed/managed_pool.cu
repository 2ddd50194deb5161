// Section managed_pool: managed memory from a stream-ordered pool (CUDA 13): the default managed
// pool, an allocation whose pages migrate like any managed memory, a free that keeps it pooled,
// and a managed pool of one's own. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 03_managed/managed_pool.cu common/standalone.cu -o build/managed_pool
//   (or in 03_managed/: nvcc -std=c++17 -I.. managed_pool.cu ../common/standalone.cu
//       -o ../build/managed_pool)  (on the same line)
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>

namespace {

__global__ void write_values(std::uint32_t* data, std::size_t count, std::uint32_t add) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = static_cast<std::uint32_t>(i) + add;
    }
}

// The pool's own account of its memory: what allocations use, and what it holds.
struct PoolBytes {
    std::uint64_t used = 0;
    std::uint64_t reserved = 0;
};

PoolBytes pool_bytes(cudaMemPool_t pool) {
    PoolBytes b;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &b.used));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &b.reserved));
    return b;
}

// The pool keeps what is freed into it only up to its release threshold, and the default pool's
// threshold is 0: at the next synchronize it gives freed memory back to the system. This is the
// process's default pool, shared by all its code: raise the threshold so that it keeps
// everything, and return the old value, to put back when done.
std::uint64_t keep_freed_memory_in_pool(cudaMemPool_t pool) {
    std::uint64_t before = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &before));
    std::uint64_t keep_all = UINT64_MAX;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
    return before;
}

cudaMemoryType memory_type(const void* pointer) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    return attributes.type;
}

// What the walkthrough found.
struct Found {
    cudaError_t pool = cudaSuccess;                    // cudaMemGetDefaultMemPool's answer
    cudaMemoryType type = cudaMemoryTypeUnregistered;  // of the pool's memory
    std::size_t wrong = 0;  // values the CPU read that the kernel had not written
    PoolBytes in_use, after_free, after_trim;
    cudaError_t own_pool = cudaSuccess;  // cudaMemPoolCreate with allocType Managed
    cudaMemoryType own_type = cudaMemoryTypeUnregistered;
};

// Step 7, below the walkthrough: a managed pool of one's own; cudaMemPoolCreate's answer, and
// where it made one, the type of 1 MiB from it in `type`.
cudaError_t try_own_managed_pool(int device, cudaStream_t stream, cudaMemoryType* type);

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step kernel_writes{"a kernel writes the pool's memory"};
constexpr tutorial::Step cpu_reads{"the CPU reads it, its pages follow"};
constexpr tutorial::Step prefetched{"a prefetch brings the pages back to the GPU"};
constexpr tutorial::Step kernel_again{"a kernel writes it again, after the prefetch"};

Found walkthrough(std::size_t bytes, int device) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    Found found;
    // 1. The default managed pool: location type None, no preferred location for its memory. A
    //    system without managed pools says so: cudaErrorNotSupported.
    cudaMemLocation no_preference{cudaMemLocationTypeNone, 0};
    cudaMemPool_t pool = nullptr;
    found.pool = cudaMemGetDefaultMemPool(&pool, &no_preference, cudaMemAllocationTypeManaged);
    if (found.pool != cudaSuccess) {
        (void)cudaGetLastError();
        return found;
    }
    // 2. Make the pool keep what is freed into it (its release threshold, above).
    std::uint64_t threshold = keep_freed_memory_in_pool(pool);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    // 3. Allocate in stream order: one pointer for CPU and GPU, as from cudaMallocManaged.
    void* allocation = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&allocation, bytes, pool, stream));
    auto* data = static_cast<std::uint32_t*>(allocation);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    found.type = memory_type(data);

    // 4. A kernel writes it; once the stream is done the CPU reads it, and its pages follow.
    {
        const tutorial::During during(kernel_writes, stream);
        write_values<<<256, 256, 0, stream>>>(data, count, 1);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    {
        const tutorial::During during(cpu_reads);
        for (std::size_t i = 0; i < count; ++i) found.wrong += data[i] != i + 1;
    }

    // 5. A prefetch brings the pages back to the GPU ahead of the next kernel, as for any
    //    managed memory; the kernel after it, in the same stream, finds them there.
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    {
        const tutorial::During during(prefetched, stream);
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, stream));
    }
    {
        const tutorial::During during(kernel_again, stream);
        write_values<<<256, 256, 0, stream>>>(data, count, 2);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    found.in_use = pool_bytes(pool);

    // 6. Free in stream order: back to the pool, which keeps it (step 2); trimming gives what no
    //    allocation uses back to the system. Then the default pool gets its threshold back.
    CUDA_CHECK(cudaFreeAsync(data, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    found.after_free = pool_bytes(pool);
    CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
    found.after_trim = pool_bytes(pool);
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));

    // 7. A managed pool of one's own (below).
    found.own_pool = try_own_managed_pool(device, stream, &found.own_type);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return found;
}

// A managed pool of one's own. The cudaMemLocationTypeNone entry speaks of creating managed
// pools, but the cudaMemPoolProps entry still says allocType must be Pinned: try it. Returns
// cudaMemPoolCreate's answer, and where it made one, the type of 1 MiB from it in `type`.
cudaError_t try_own_managed_pool(int device, cudaStream_t stream, cudaMemoryType* type) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypeManaged;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;  // preferred location: this GPU
    props.location.id = device;
    cudaMemPool_t own = nullptr;
    const cudaError_t status = cudaMemPoolCreate(&own, &props);
    if (status != cudaSuccess) {
        (void)cudaGetLastError();  // a refusal is an answer here
        return status;
    }
    void* data = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&data, 1 << 20, own, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    *type = memory_type(data);
    CUDA_CHECK(cudaFreeAsync(data, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemPoolDestroy(own));
    return status;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found f = walkthrough(std::size_t{64} << 20, 0);
    times.print();
    if (f.pool != cudaSuccess) {
        tutorial::skip_if_no_usable_device();  // no GPU at all: the course's SKIP line, exit 77
        std::printf("cudaMemGetDefaultMemPool: %s\n", cudaGetErrorName(f.pool));
        return 0;
    }
    std::printf("64 MiB from the default managed pool: %s, %zu values read wrong\n",
                tutorial::memory_type_name(f.type).c_str(), f.wrong);
    // The card's number: what the pool kept reserved once the memory was freed into it, with its
    // release threshold raised (step 2), and after the trim.
    const auto mib = [](std::uint64_t b) { return static_cast<double>(b) / (1 << 20); };
    std::printf(
        "%.0f MiB stayed reserved after cudaFreeAsync (release threshold raised); "
        "cudaMemPoolTrimTo(0) left %.0f MiB\n",
        mib(f.after_free.reserved), mib(f.after_trim.reserved));
    std::printf("a managed pool of one's own: %s\n", cudaGetErrorName(f.own_pool));
    return f.wrong == 0 ? 0 : 1;
}
#endif
