// Section pinned_pool: pinned host memory from a stream-ordered pool (CUDA 12.6 and later), the
// cudaMallocHost that does not pin pages at every call.
// Built alone, from the course's folder (mkdir -p build first), then ./build/pinned_pool:
//   nvcc -std=c++17 -I. 02_pinned/pinned_pool.cu common/standalone.cu -o build/pinned_pool
//   (or in 02_pinned/: nvcc -std=c++17 -I.. pinned_pool.cu ../common/standalone.cu
//       -o ../build/pinned_pool)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step pool_get_give{"the warm pool hands out memory and takes it back"};
constexpr tutorial::Step pinned_get_give{
    "new pinned memory and back (cudaMallocHost, cudaFreeHost)"};
constexpr tutorial::Step pool_copy{"copy from the pool's memory"};
constexpr tutorial::Step pinned_copy{"copy from cudaMallocHost's memory"};

// What the walkthrough found.
struct Found {
    cudaMemoryType type;   // cudaPointerGetAttributes on the pool's memory
    bool cpu_used;         // the CPU wrote and read it back before any access call
    std::size_t wrong;     // a kernel's values the CPU read wrong, after the access call
    bool default_differs;  // the default pool for pinned host memory is not the one made here
    bool current_set;      // cudaMemGetMemPool gave back the pool cudaMemSetMemPool made current
};

// Below the walkthrough: the pool, and the access a GPU needs to use its memory.
cudaMemPool_t create_host_pool();
void give_device_access(cudaMemPool_t pool, int device);

Found walkthrough(int device, std::size_t bytes) {
    Found found{};
    const std::size_t count = bytes / sizeof(std::uint32_t);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    // 1. The pool, and memory from it in stream order, as with cudaMallocAsync: work in `stream`
    //    may use it after the call, the CPU once the stream has got there.
    cudaMemPool_t pool = create_host_pool();
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&data), bytes, pool, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, data));
    found.type = attributes.type;
    // 2. The CPU uses it at once; a kernel only after cudaMemPoolSetAccess.
    data[0] = 7;
    data[count - 1] = 9;
    found.cpu_used = data[0] == 7 && data[count - 1] == 9;
    give_device_access(pool, device);
    fill_on_device(data, count, 11);  // a kernel writes it...
    found.wrong = mismatches_on_host(data, count, 11);  // ...and the CPU reads the values
    CUDA_CHECK(cudaFreeAsync(data, stream));  // back to the pool, which keeps it
    // 3. The pool is warm now: allocating and freeing again finds pages pinned already, where
    //    cudaMallocHost and cudaFreeHost pin and unpin them every time.
    void* again = nullptr;
    {
        const tutorial::During during(pool_get_give, stream);
        CUDA_CHECK(cudaMallocFromPoolAsync(&again, bytes, pool, stream));
        CUDA_CHECK(cudaFreeAsync(again, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    void* pinned = nullptr;
    {
        const tutorial::During during(pinned_get_give, stream);
        CUDA_CHECK(cudaMallocHost(&pinned, bytes));
        CUDA_CHECK(cudaFreeHost(pinned));
    }
    // 4. Both kinds of pinned memory copied to the device.
    void* device_copy = nullptr;
    CUDA_CHECK(cudaMalloc(&device_copy, bytes));
    CUDA_CHECK(cudaMallocFromPoolAsync(&again, bytes, pool, stream));
    CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    CUDA_CHECK(cudaStreamSynchronize(stream));  // the pool's memory is the CPU's from here
    std::memset(again, 1, bytes);
    std::memset(pinned, 1, bytes);
    {
        const tutorial::During during(pool_copy, stream);
        CUDA_CHECK(cudaMemcpyAsync(device_copy, again, bytes, cudaMemcpyHostToDevice, stream));
    }
    {
        const tutorial::During during(pinned_copy, stream);
        CUDA_CHECK(cudaMemcpyAsync(device_copy, pinned, bytes, cudaMemcpyHostToDevice, stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaFreeHost(pinned));
    CUDA_CHECK(cudaFreeAsync(again, stream));
    CUDA_CHECK(cudaFree(device_copy));
    // 5. CUDA 13 names a current pool per location and kind of memory, as cudaDeviceSetMemPool
    //    did for devices: here the pinned host memory of the whole machine.
    cudaMemLocation host{cudaMemLocationTypeHost, 0};
    cudaMemPool_t default_pool = nullptr, current = nullptr;
    CUDA_CHECK(cudaMemGetDefaultMemPool(&default_pool, &host, cudaMemAllocationTypePinned));
    CUDA_CHECK(cudaMemSetMemPool(&host, cudaMemAllocationTypePinned, pool));
    CUDA_CHECK(cudaMemGetMemPool(&current, &host, cudaMemAllocationTypePinned));
    found.current_set = current == pool;
    found.default_differs = default_pool != nullptr && default_pool != pool;
    CUDA_CHECK(cudaMemSetMemPool(&host, cudaMemAllocationTypePinned, default_pool));  // as it was
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return found;
}

// A pool of pinned host memory, on no particular NUMA node (cudaMemLocationTypeHost). A pool of
// this location type cannot be shared with other processes (cudaMemPoolCreate refuses any handle
// type for it; a cudaMemLocationTypeHostNuma pool is not refused), so handleTypes stays None.
// Freed memory stays in the pool (threshold: keep everything) so that the next allocation of
// that size finds pages already pinned.
cudaMemPool_t create_host_pool() {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeHost;
    props.location.id = 0;  // ignored for cudaMemLocationTypeHost
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    std::uint64_t keep_all = UINT64_MAX;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
    return pool;
}

// The CPU may use the pool's memory at once; a GPU only once it is given access.
void give_device_access(cudaMemPool_t pool, int device) {
    cudaMemAccessDesc access{};
    access.location.type = cudaMemLocationTypeDevice;
    access.location.id = device;
    access.flags = cudaMemAccessFlagsProtReadWrite;
    CUDA_CHECK(cudaMemPoolSetAccess(pool, &access, 1));  // one descriptor
}

// The pool's memory written by a kernel before any cudaMemPoolSetAccess: the device has no
// access to it. The kernel faults and the context is lost for good: run it in a process of its
// own. (CUDA_CHECK stops at the synchronize, where the fault is reported.)
void kernel_without_access() {
    cudaMemPool_t pool = create_host_pool();
    void* data = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&data, 1 << 20, pool, nullptr));
    CUDA_CHECK(cudaStreamSynchronize(nullptr));
    fill_on_device_async(static_cast<std::uint32_t*>(data), (1 << 20) / 4, 11, nullptr);
    CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <string>

// The walkthrough; with the argument no-access, the kernel without access instead (it faults).
int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "no-access") kernel_without_access();
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    Found f{};  // over every round: the CPU's use, the kernel's values, the current pool
    f.cpu_used = f.current_set = true;
    for (int round = 0; round < 9; ++round) {  // nine rounds: the answer is their medians
        const Found r = walkthrough(0, std::size_t{64} << 20);
        f.cpu_used = f.cpu_used && r.cpu_used;
        f.wrong += r.wrong;
        f.current_set = f.current_set && r.current_set;
    }
    times.print();
    std::printf("64 MiB from a pool of pinned host memory, 9 times: the CPU used it before any "
                "access call: %s; a kernel's values after cudaMemPoolSetAccess: %zu wrong; the "
                "current host pool could be set and read back: %s\n",
                f.cpu_used ? "yes" : "no", f.wrong, f.current_set ? "yes" : "no");
    // The answer: how much faster a warm pool hands out pinned memory than cudaMallocHost.
    const double pool_ms = times.median_host_ms(pool_get_give);
    const double malloc_host_ms = times.median_host_ms(pinned_get_give);
    std::printf("64 MiB: a warm pool handed out and took back pinned memory in %.3f ms against "
                "%.3f ms for cudaMallocHost: %.0fx faster; its memory copies to the GPU at %.2fx "
                "the speed\n",
                pool_ms, malloc_host_ms, malloc_host_ms / pool_ms,
                times.median_ms(pinned_copy) / times.median_ms(pool_copy));
    return f.cpu_used && f.wrong == 0 && f.current_set ? 0 : 1;
}
#endif
