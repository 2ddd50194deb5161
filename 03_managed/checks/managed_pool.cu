// Checks of section managed_pool: runs ../managed_pool.cu's walkthrough on 64 MiB with the
// driver's Unified Memory counters counting what each step moved, reads the pool's used and
// reserved memory as the walkthrough found them, and judges both.
#include "03_managed/managed_pool.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/harness/um_counters.hpp"
#include "common/text.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

namespace {

using tutorial::format;

constexpr std::size_t bytes = 64 * tutorial::MiB;  // counted steps stay at 64 MiB
constexpr std::size_t count = bytes / sizeof(std::uint32_t);

struct Counted {
    Found found;
    tutorial::UmTraffic gpu_write, cpu_read, prefetch, kernel_after;
};

Counted count_walkthrough(tutorial::UmCounters& counters, int device) {
    tutorial::StepTraffic traffic(counters);
    Counted c;
    c.found = walkthrough(bytes, device);
    c.gpu_write = traffic.of(kernel_writes);
    c.cpu_read = traffic.of(cpu_reads);
    c.prefetch = traffic.of(prefetched);
    c.kernel_after = traffic.of(kernel_again);
    return c;
}

double share(std::uint64_t moved) {
    return 100.0 * static_cast<double>(moved) / bytes;
}

// The counted table and the counted claims.
void claim_counts(tutorial::Context& ctx, const tutorial::UmCounters& counters, const Counted& c) {
    tutorial::Table table(tutorial::um_columns("step"));
    table.named("counted");
    table.add_row(tutorial::um_cells(kernel_writes.name, c.gpu_write));
    table.add_row(tutorial::um_cells(cpu_reads.name, c.cpu_read));
    table.add_row(tutorial::um_cells(prefetched.name, c.prefetch));
    table.add_row(tutorial::um_cells(kernel_again.name, c.kernel_after));
    table.print();
    std::string why =
        tutorial::why_not_counted(counters, {&c.cpu_read, &c.prefetch, &c.kernel_after},
                                  tutorial::why_pages_need_not_migrate(ctx.device));
    if (why.empty() && c.gpu_write.gpu_page_faults + c.cpu_read.cpu_page_faults == 0) {
        why =
            "the counters reported no fault at all, not even for the first touches, so their "
            "records for this memory were lost";
    }
    ctx.claim(tutorial::counted_at_least(
                  "cpu_read_pulls_pool_pages",
                  "a CPU read of a pool's managed memory pulls its pages back (MiB device to host, "
                  "% of the buffer)",
                  share(c.cpu_read.dtoh.total), 90.0, "%",
                  "the pages were not in device memory, or the CPU read them remotely"),
              why);
    ctx.claim(tutorial::counted_at_least(
                  "prefetch_brings_back",
                  "a prefetch brings them back (MiB host to device, % of the buffer)",
                  share(c.prefetch.htod.total), 90.0, "%",
                  "the pages were already on the GPU, or the prefetch was ignored"),
              why);
    ctx.claim(tutorial::counted_at_most(
                  "nothing_after_prefetch",
                  "after the prefetch a kernel's writes move nothing: MiB host to device",
                  static_cast<double>(c.kernel_after.htod.total) / tutorial::MiB, 1.0, " MiB",
                  "the prefetch had not finished, or the pages went back to the CPU"),
              why);
}

void print_pool(const Found& f) {
    tutorial::Table pool_table({{"the pool"}, {"used"}, {"reserved"}});
    pool_table.named("pool");
    for (const auto& [when, b] : {std::pair<const char*, PoolBytes>{"while allocated", f.in_use},
                                  {"after cudaFreeAsync", f.after_free},
                                  {"after cudaMemPoolTrimTo(0)", f.after_trim}}) {
        pool_table.add_row(
            {when, tutorial::format_bytes(b.used), tutorial::format_bytes(b.reserved)});
    }
    std::printf("\n");
    pool_table.print();
    std::printf("\nA managed pool of one's own (cudaMemPoolCreate, allocType Managed): %s%s.\n\n",
                cudaGetErrorName(f.own_pool),
                f.own_pool == cudaSuccess
                    ? (", its memory is " + tutorial::memory_type_name(f.own_type)).c_str()
                    : "");
}

// The claims on what the walkthrough found.
bool claim_pool(tutorial::Context& ctx, const Found& f) {
    const bool managed = f.type == cudaMemoryTypeManaged;
    const bool pooled = f.in_use.used >= bytes && f.after_free.used + bytes <= f.in_use.used &&
                        f.after_free.reserved >= bytes;
    ctx.claim(tutorial::documented(
        "pool_memory_is_managed", "memory from the default managed pool is managed memory", managed,
        "cudaPointerGetAttributes: " + tutorial::memory_type_name(f.type),
        "the pool gave device memory",
        tutorial::Entry{"Runtime API reference: cudaMemAllocationTypeManaged", "managed", "is"}));
    // Managed memory's pointer "is valid on the CPU and on all GPUs in the system that support
    // managed memory" (the cudaMallocManaged entry), and the pool's memory is managed memory.
    ctx.claim(tutorial::documented(
        "cpu_reads_pool_memory", "the CPU reads what a kernel wrote through the pool's pointer",
        f.wrong == 0, format("%zu of %zu values wrong", f.wrong, count),
        "the CPU read before the kernel ended",
        tutorial::Entry{"Runtime API reference: cudaMallocManaged", "CPU GPUs", "is valid"}));
    // The threshold is the amount of reserved memory the pool holds onto before it tries to
    // release any (the cudaMemPoolAttrReleaseThreshold entry); at its maximum the pool never
    // holds more, so it keeps all it has: "will try to release" applies only above it.
    ctx.claim(tutorial::documented(
        "freed_memory_kept",
        "cudaFreeAsync hands the memory back to the pool, which keeps it reserved", pooled,
        format("used %s -> %s, reserved %s", tutorial::format_bytes(f.in_use.used).c_str(),
               tutorial::format_bytes(f.after_free.used).c_str(),
               tutorial::format_bytes(f.after_free.reserved).c_str()),
        "the release threshold was not kept",
        tutorial::Entry{"Runtime API reference: cudaMemPoolAttrReleaseThreshold",
                        "cudaMemPoolAttrReleaseThreshold reserved", "hold onto"}));
    ctx.claim(tutorial::observed(
        "own_managed_pool", "cudaMemPoolCreate makes a managed pool of one's own",
        f.own_pool == cudaSuccess && f.own_type == cudaMemoryTypeManaged,
        format("%s%s", cudaGetErrorName(f.own_pool),
               f.own_pool == cudaSuccess
                   ? (", memory " + tutorial::memory_type_name(f.own_type)).c_str()
                   : ""),
        "the cudaMemPoolProps entry says allocType must be Pinned, while cudaMemLocationTypeNone "
        "speaks of creating managed pools"));
    return managed && f.wrong == 0 && pooled;
}

}  // namespace

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
    const Counted c = count_walkthrough(counters, ctx.device);
    if (c.found.pool == cudaErrorNotSupported) {
        return ctx.skip(
            "cudaMemGetDefaultMemPool(cudaMemAllocationTypeManaged) returned "
            "cudaErrorNotSupported: no managed memory pool on this system");
    }
    CUDA_CHECK(c.found.pool);
    std::printf(
        "The walkthrough on 64 MiB from the default managed pool (cudaPointerGetAttributes:\n"
        "%s). What moved at each step, counted by the driver:\n%s\n\n",
        tutorial::memory_type_name(c.found.type).c_str(), counters.control_line().c_str());
    claim_counts(ctx, counters, c);
    print_pool(c.found);
    const bool ok = claim_pool(ctx, c.found);
    return ctx.verdict(ok, format("managed memory from the pool, %zu values wrong, freed into the "
                                  "pool and kept",
                                  c.found.wrong));
}

TUTORIAL_SECTION(managed_pool, run_managed_pool);
