// Checks of section managed_pool: runs ../managed_pool.cu's steps on 64 MiB, counts what the
// driver moved at each (Unified Memory counters), and reads the pool's used and reserved memory.
#include "03_managed/managed_pool.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/um_counters.hpp"
#include "common/text.hpp"

#include <cstdio>
#include <string>

namespace {

using tutorial::format;

constexpr std::size_t bytes = 64 * tutorial::MiB;  // counted steps stay at 64 MiB
constexpr std::size_t count = bytes / sizeof(std::uint32_t);

struct PoolState {
    std::uint64_t used = 0;
    std::uint64_t reserved = 0;
};

PoolState state_of(cudaMemPool_t pool) {
    PoolState s;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &s.used));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &s.reserved));
    return s;
}

struct Run {
    cudaMemoryType type = cudaMemoryTypeUnregistered;
    std::size_t wrong = 0;  // values the CPU read that the kernel did not write
    tutorial::UmTraffic gpu_write, cpu_read, prefetch, kernel_after;
    PoolState in_use, after_free, after_trim;
    cudaError_t own_pool = cudaSuccess;  // cudaMemPoolCreate with allocType Managed
    cudaMemoryType own_type = cudaMemoryTypeUnregistered;
};

cudaMemoryType type_of(const void* pointer) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    return attributes.type;
}

void count_steps(tutorial::UmCounters& counters, cudaMemPool_t pool, int device,
                 cudaStream_t stream, Run& r) {
    std::uint32_t* data = allocate(pool, bytes, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    r.type = type_of(data);
    r.gpu_write = counters.measure([&] { gpu_writes(data, count, stream); });
    r.cpu_read = counters.measure([&] {
        for (std::size_t i = 0; i < count; ++i)
            r.wrong += data[i] != static_cast<std::uint32_t>(i) + 1;
    });
    r.prefetch = counters.measure([&] { prefetch_to_gpu(data, bytes, device, stream); });
    r.kernel_after = counters.measure([&] { gpu_writes(data, count, stream); });
    r.in_use = state_of(pool);
    release(data, stream);
    r.after_free = state_of(pool);
    trim(pool);
    r.after_trim = state_of(pool);
}

void try_own_pool(int device, cudaStream_t stream, Run& r) {
    cudaMemPool_t own = nullptr;
    r.own_pool = create_managed_pool(device, &own);
    if (r.own_pool != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    std::uint32_t* data = allocate(own, tutorial::MiB, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    r.own_type = type_of(data);
    release(data, stream);
    CUDA_CHECK(cudaMemPoolDestroy(own));
}

double share(std::uint64_t moved) {
    return 100.0 * static_cast<double>(moved) / bytes;
}

}  // namespace

// The counted steps, their table and the counted claims.
void count_and_judge(tutorial::Context& ctx, tutorial::UmCounters& counters, cudaMemPool_t pool,
                     cudaStream_t stream, Run& r) {
    count_steps(counters, pool, ctx.device, stream, r);
    std::printf(
        "64 MiB from the default managed pool (cudaPointerGetAttributes: %s memory).\n"
        "What moved at each step, counted by the driver:\n%s\n\n",
        tutorial::memory_type_name(r.type).c_str(), counters.control_line().c_str());
    tutorial::Table table(tutorial::um_columns("step"));
    table.add_row(tutorial::um_cells("a kernel writes it", r.gpu_write));
    table.add_row(tutorial::um_cells("the CPU reads it", r.cpu_read));
    table.add_row(tutorial::um_cells("cudaMemPrefetchAsync to the GPU", r.prefetch));
    table.add_row(tutorial::um_cells("a kernel writes it again", r.kernel_after));
    table.print();
    std::string why =
        tutorial::why_not_counted(counters, {&r.cpu_read, &r.prefetch, &r.kernel_after},
                                  tutorial::why_pages_need_not_migrate(ctx.device));
    if (why.empty() && r.gpu_write.gpu_page_faults + r.cpu_read.cpu_page_faults == 0) {
        why =
            "the counters reported no fault at all, not even for the first touches, so their "
            "records for this memory were lost";
    }
    ctx.claim(tutorial::counted_at_least(
                  "cpu_read_pulls_pool_pages",
                  "the CPU reading a pool's managed memory pulls its pages from the GPU: MiB "
                  "device to host, as a share of the buffer",
                  share(r.cpu_read.dtoh.total), 90.0, "%",
                  "the pages were not in device memory, or the CPU read them remotely"),
              why);
    ctx.claim(tutorial::counted_at_least(
                  "prefetch_brings_back",
                  "a prefetch brings them back: MiB host to device, as a share of the buffer",
                  share(r.prefetch.htod.total), 90.0, "%",
                  "the pages were already on the GPU, or the prefetch was ignored"),
              why);
    ctx.claim(tutorial::counted_at_most(
                  "nothing_after_prefetch",
                  "after the prefetch a kernel's writes move nothing: MiB host to device",
                  static_cast<double>(r.kernel_after.htod.total) / tutorial::MiB, 1.0, " MiB",
                  "the prefetch had not finished, or the pages went back to the CPU"),
              why);
}

tutorial::Result run_managed_pool(tutorial::Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported) != 1) {
        return ctx.skip("memoryPoolsSupported = 0: no stream-ordered pools on this device");
    }
    // Observed on driver 580.159.04: the counters report nothing at all for memory from the
    // managed pool until the process has made one cudaMallocManaged allocation while they were
    // on (one made before they were turned on does not count). One small allocation does it.
    tutorial::UmCounters counters;
    void* first_managed = nullptr;
    CUDA_CHECK(cudaMallocManaged(&first_managed, 4096));
    CUDA_CHECK(cudaFree(first_managed));
    cudaMemPool_t pool = nullptr;
    if (const cudaError_t status = default_managed_pool(&pool); status != cudaSuccess) {
        (void)cudaGetLastError();
        if (status == cudaErrorNotSupported) {
            return ctx.skip("cudaMemGetDefaultMemPool(cudaMemAllocationTypeManaged) returned "
                            "cudaErrorNotSupported: no managed memory pool on this system");
        }
        CUDA_CHECK(status);
    }
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::uint64_t threshold = keep_freed_memory_in_pool(pool);
    Run r;
    count_and_judge(ctx, counters, pool, stream, r);
    try_own_pool(ctx.device, stream, r);
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    CUDA_CHECK(cudaStreamDestroy(stream));

    tutorial::Table pool_table({{"the pool"}, {"used"}, {"reserved"}});
    for (const auto& [when, s] : {std::pair<const char*, PoolState>{"while allocated", r.in_use},
                                  {"after cudaFreeAsync", r.after_free},
                                  {"after cudaMemPoolTrimTo(0)", r.after_trim}}) {
        pool_table.add_row(
            {when, tutorial::format_bytes(s.used), tutorial::format_bytes(s.reserved)});
    }
    std::printf("\n");
    pool_table.print();
    std::printf("\nA managed pool of one's own (cudaMemPoolCreate, allocType Managed): %s%s.\n\n",
                cudaGetErrorName(r.own_pool),
                r.own_pool == cudaSuccess
                    ? format(", its memory is %s",
                             tutorial::memory_type_name(r.own_type).c_str())
                          .c_str()
                    : "");

    const bool managed = r.type == cudaMemoryTypeManaged;
    const bool pooled = r.in_use.used >= bytes && r.after_free.used + bytes <= r.in_use.used &&
                        r.after_free.reserved >= bytes;
    ctx.claim(tutorial::documented(
        "pool_memory_is_managed", "memory from the default managed pool is managed memory",
        managed, format("cudaPointerGetAttributes: %s", tutorial::memory_type_name(r.type).c_str()),
        "the pool gave device memory",
        tutorial::Entry{"Runtime API reference: cudaMemGetDefaultMemPool",
                        "cudaMemAllocationTypeManaged cudaMemLocationTypeNone", "can"}));
    ctx.claim(tutorial::documented(
        "cpu_reads_pool_memory", "the CPU reads what a kernel wrote through the pool's pointer",
        r.wrong == 0, format("%zu of %zu values wrong", r.wrong, count),
        "the CPU read before the kernel ended",
        tutorial::Entry{"Runtime API reference: cudaMemAllocationTypeManaged", "managed", "is"}));
    // With the threshold at its maximum the pool never holds more than it, so it never tries to
    // give memory back: the entry's "will try to release" applies only above the threshold.
    ctx.claim(tutorial::documented(
        "freed_memory_kept",
        "cudaFreeAsync hands the memory back to the pool, which keeps it reserved", pooled,
        format("used %s -> %s, reserved %s", tutorial::format_bytes(r.in_use.used).c_str(),
               tutorial::format_bytes(r.after_free.used).c_str(),
               tutorial::format_bytes(r.after_free.reserved).c_str()),
        "the release threshold was not kept",
        tutorial::Entry{"Runtime API reference: cudaMemPoolAttrReleaseThreshold", "threshold",
                        "will"}));
    ctx.claim(tutorial::observed(
        "own_managed_pool", "cudaMemPoolCreate makes a managed pool of one's own",
        r.own_pool == cudaSuccess && r.own_type == cudaMemoryTypeManaged,
        format("%s%s", cudaGetErrorName(r.own_pool),
               r.own_pool == cudaSuccess
                   ? (", memory " + tutorial::memory_type_name(r.own_type)).c_str()
                   : ""),
        "the cudaMemPoolProps entry says allocType must be Pinned, while cudaMemLocationTypeNone "
        "speaks of creating managed pools"));
    return ctx.verdict(managed && r.wrong == 0 && pooled,
                       format("managed memory from the pool, %zu values wrong, freed into the "
                              "pool and kept",
                              r.wrong));
}

TUTORIAL_SECTION(managed_pool, run_managed_pool);
