// Checks of section pinned_pool: what the pool's memory is, who may touch it, what an allocation
// costs against cudaMallocHost, and how fast it copies, all from ../pinned_pool.cu's steps.
#include "02_pinned/pinned_pool.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/text.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using tutorial::format;
using tutorial::format_bytes;

__global__ void write_index(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = static_cast<std::uint32_t>(i * 2654435761u);
    }
}

std::size_t wrong_on_host(const std::uint32_t* data, std::size_t count) {
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i)
        wrong += data[i] != static_cast<std::uint32_t>(i * 2654435761u);
    return wrong;
}

struct Measured {
    std::size_t bytes = 0;
    cudaMemoryType type = cudaMemoryTypeUnregistered;  // cudaPointerGetAttributes on pool memory
    bool cpu_wrote = false;           // the CPU wrote and read it before any access call
    std::size_t wrong = 0;            // a kernel's values, read by the CPU, after the access
    tutorial::Spread pool_ms;         // allocation + free, warm pool
    tutorial::Spread malloc_host_ms;  // cudaMallocHost + cudaFreeHost
    tutorial::Spread copy_pool_ms;    // host-to-device copy from pool memory
    tutorial::Spread copy_malloc_host_ms;
    bool default_differs = false;  // the default host pool is not the one created here
    bool current_set = false;      // cudaMemGetMemPool gave back the pool just set
};

void use_the_memory(cudaMemPool_t pool, int device, cudaStream_t stream, Measured& m) {
    auto* data = static_cast<std::uint32_t*>(allocate(pool, m.bytes, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, data));
    m.type = attributes.type;
    const std::size_t count = m.bytes / sizeof(std::uint32_t);
    data[0] = 7;
    data[count - 1] = 9;
    m.cpu_wrote = data[0] == 7 && data[count - 1] == 9;
    give_device_access(pool, device);
    write_index<<<256, 256, 0, stream>>>(data, count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    m.wrong = wrong_on_host(data, count);
    release(data, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

void time_allocations(cudaMemPool_t pool, cudaStream_t stream, Measured& m) {
    const auto ms = tutorial::interleaved_ms(2, 1, 9, [&](std::size_t which) {
        tutorial::HostTimer timer;
        if (which == 0) {
            release(allocate(pool, m.bytes, stream), stream);
            CUDA_CHECK(cudaStreamSynchronize(stream));
        } else {
            void* host = nullptr;
            CUDA_CHECK(cudaMallocHost(&host, m.bytes));
            CUDA_CHECK(cudaFreeHost(host));
        }
        return timer.elapsed_ms();
    });
    m.pool_ms = ms[0];
    m.malloc_host_ms = ms[1];
}

void time_copies(cudaMemPool_t pool, cudaStream_t stream, Measured& m) {
    void* from_pool = allocate(pool, m.bytes, stream);
    void* from_malloc_host = nullptr;
    CUDA_CHECK(cudaMallocHost(&from_malloc_host, m.bytes));
    void* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, m.bytes));
    CUDA_CHECK(cudaStreamSynchronize(stream));  // the pool's memory is ours from here
    std::memset(from_pool, 1, m.bytes);
    std::memset(from_malloc_host, 1, m.bytes);
    tutorial::EventTimer timer(stream);
    const auto ms = tutorial::interleaved_ms(2, 2, 9, [&](std::size_t which) {
        timer.start();
        CUDA_CHECK(cudaMemcpyAsync(device, which == 0 ? from_pool : from_malloc_host, m.bytes,
                                   cudaMemcpyHostToDevice, stream));
        timer.stop();
        return timer.elapsed_ms();
    });
    m.copy_pool_ms = ms[0];
    m.copy_malloc_host_ms = ms[1];
    CUDA_CHECK(cudaFree(device));
    CUDA_CHECK(cudaFreeHost(from_malloc_host));
    release(from_pool, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

Measured measure(int device, std::size_t bytes) {
    Measured m;
    m.bytes = bytes;
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaMemPool_t pool = create_host_pool();
    use_the_memory(pool, device, stream, m);
    time_allocations(pool, stream, m);
    time_copies(pool, stream, m);

    const cudaMemPool_t default_pool = default_host_pool();
    m.default_differs = default_pool != nullptr && default_pool != pool;
    make_current_host_pool(pool);
    m.current_set = current_host_pool() == pool;
    make_current_host_pool(default_pool);  // as it was, before the pool goes
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return m;
}

const char* type_name(cudaMemoryType type) {
    switch (type) {
        case cudaMemoryTypeHost: return "cudaMemoryTypeHost";
        case cudaMemoryTypeDevice: return "cudaMemoryTypeDevice";
        case cudaMemoryTypeManaged: return "cudaMemoryTypeManaged";
        default: return "cudaMemoryTypeUnregistered";
    }
}

}  // namespace

// Child role: a kernel writes pool memory before cudaMemPoolSetAccess gave the device access.
int child_pool_without_access(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    cudaMemPool_t pool = create_host_pool();
    auto* data = static_cast<std::uint32_t*>(allocate(pool, 1 << 20, nullptr));
    CUDA_CHECK(cudaStreamSynchronize(nullptr));
    std::printf("a kernel writes 1 MiB of the pool's memory, no access given...\n");
    write_index<<<64, 256>>>(data, (1 << 20) / sizeof(std::uint32_t));
    CUDA_CHECK_LAUNCH_SYNC();
    std::printf("the kernel finished\n");
    return 0;
}

tutorial::Result run_pinned_pool(tutorial::Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrHostMemoryPoolsSupported) != 1) {
        return ctx.skip("hostMemoryPoolsSupported = 0: this device has no pools of host memory");
    }
    const std::size_t bytes = ctx.size_or(ctx.quick() ? 16 * tutorial::MiB : 64 * tutorial::MiB);
    const Measured m = measure(ctx.device, bytes);

    std::printf("A pool of pinned host memory; each step on %s:\n\n", format_bytes(bytes).c_str());
    tutorial::Table table(
        {{"what"}, {"pool (warm)"}, {"cudaMallocHost"}, {"the pool's advantage"}});
    table.add_row({"allocate + free, ms (median)", format("%.3f", m.pool_ms.median),
                   format("%.3f", m.malloc_host_ms.median),
                   format("%.0fx", m.malloc_host_ms.median / m.pool_ms.median)});
    table.add_row({"copy to the GPU, GB/s (median)",
                   format("%.1f", tutorial::gb_per_s(bytes, m.copy_pool_ms.median)),
                   format("%.1f", tutorial::gb_per_s(bytes, m.copy_malloc_host_ms.median)),
                   format("%.2fx", m.copy_malloc_host_ms.median / m.copy_pool_ms.median)});
    table.print();
    std::string link;
    const double pcie = tutorial::pcie_link_gbps(ctx.device, &link);
    if (pcie > 0.0) std::printf("(the link: %s, %.1f GB/s each way)\n", link.c_str(), pcie);
    std::printf("\ncudaPointerGetAttributes calls the pool's memory %s.\n\n", type_name(m.type));

    std::printf(
        "A kernel writes the pool's memory before any cudaMemPoolSetAccess (in a child):\n");
    const tutorial::ChildResult child = tutorial::run_child(
        "pool_without_access", std::vector<std::string>{std::to_string(ctx.device)});
    tutorial::print_child_output(child);
    std::printf("   The child %s.\n\n", child.describe().c_str());

    const double faster = m.malloc_host_ms.median / m.pool_ms.median;
    const double copy_ratio = m.copy_malloc_host_ms.median / m.copy_pool_ms.median;
    ctx.claim(tutorial::documented(
        "the CPU uses a host pool's memory without any access call", m.cpu_wrote,
        m.cpu_wrote ? "it wrote and read it back" : "it read back other values",
        "the pool's memory is not the host's",
        "Runtime API reference: cudaMemPoolCreate (host pools: accessible from the host CPU)"));
    ctx.claim(tutorial::documented(
        "after cudaMemPoolSetAccess a kernel writes it and the CPU reads the values", m.wrong == 0,
        format("%zu of %zu values wrong", m.wrong, bytes / sizeof(std::uint32_t)),
        "the access grant did not reach this device",
        "Runtime API reference: cudaMemPoolSetAccess"));
    ctx.claim(tutorial::observed(
        "without cudaMemPoolSetAccess a kernel's write fails with cudaErrorIllegalAddress",
        child.failed_with("cudaErrorIllegalAddress"), "the child " + child.describe(),
        "the cudaMemPoolCreate entry gives host pools the CPU's access only, and names no error "
        "for a device's use"));
    ctx.claim(tutorial::documented(
        "cudaMemGetMemPool gives back the pool cudaMemSetMemPool made current for pinned host "
        "memory",
        m.current_set && m.default_differs,
        m.current_set ? "the same pool, and the default host pool is another" : "another pool",
        "the location or the allocation type did not match",
        "Runtime API reference: cudaMemGetMemPool, cudaMemSetMemPool"));
    ctx.claim(tutorial::at_least(
        "a warm pool allocates pinned memory faster than cudaMallocHost", faster, 3.0, "x",
        "the pool gave its memory back between allocations (release threshold)"));
    ctx.claim(tutorial::at_least(
        "the pool's memory copies to the GPU as fast as cudaMallocHost's", copy_ratio, 0.8, "x",
        "the pool's pages are not pinned, or the copies met other traffic"));
    return ctx.verdict(m.cpu_wrote && m.wrong == 0 && m.current_set,
                       format("the CPU and, after the grant, a kernel used the pool's memory (%zu "
                              "wrong); the current host pool could be set and read back",
                              m.wrong));
}

TUTORIAL_SECTION(pinned_pool, run_pinned_pool);
TUTORIAL_CHILD(pool_without_access, child_pool_without_access);
