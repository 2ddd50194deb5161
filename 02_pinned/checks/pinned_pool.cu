// Checks of section pinned_pool: runs the walkthrough of ../pinned_pool.cu round after round and
// times its steps (allocations on the host's clock, copies by events), runs its kernel without
// access in a child, and judges what the pool's memory is, who may touch it and what it costs.
#include "02_pinned/pinned_pool.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using tutorial::format;
using tutorial::format_bytes;

// Medians over rounds of the walkthrough.
struct Medians {
    double pool_ms, malloc_host_ms;            // allocate + free (host clock)
    double copy_pool_ms, copy_malloc_host_ms;  // one copy to the device (events)
};

Medians time_rounds(int device, std::size_t bytes, int runs, Found& seen) {
    tutorial::StepTimes times;
    for (int r = 0; r < runs; ++r) {
        const Found f = walkthrough(device, bytes);
        seen.cpu_used = seen.cpu_used && f.cpu_used;
        seen.wrong += f.wrong;
        seen.current_set = seen.current_set && f.current_set;
        seen.default_differs = seen.default_differs && f.default_differs;
    }
    return {times.median_host_ms(pool_get_give), times.median_host_ms(pinned_get_give),
            times.median_ms(pool_copy), times.median_ms(pinned_copy)};
}

void print_measures(int device, std::size_t bytes, int runs, const Medians& m, const Found& seen) {
    std::printf(
        "A pool of pinned host memory; the walkthrough %d times after a warm-up, on %s:\n\n", runs,
        format_bytes(bytes).c_str());
    tutorial::Table table(
        {{"what"}, {"pool (warm)"}, {"cudaMallocHost"}, {"the pool's advantage"}});
    table.add_row({"allocate + free, ms (median)", format("%.3f", m.pool_ms),
                   format("%.3f", m.malloc_host_ms),
                   format("%.0fx", m.malloc_host_ms / m.pool_ms)});
    table.add_row({"copy to the GPU, GB/s (median)",
                   format("%.1f", tutorial::gb_per_s(bytes, m.copy_pool_ms)),
                   format("%.1f", tutorial::gb_per_s(bytes, m.copy_malloc_host_ms)),
                   format("%.2fx", m.copy_malloc_host_ms / m.copy_pool_ms)});
    table.print();
    std::string link;
    const double pcie = tutorial::pcie_link_gbps(device, &link);
    if (pcie > 0.0) std::printf("(the link: %s, %.1f GB/s each way)\n", link.c_str(), pcie);
    std::printf("\ncudaPointerGetAttributes calls the pool's memory %s.\n\n",
                tutorial::memory_type_name(seen.type).c_str());
}

}  // namespace

// Child role: kernel_without_access, the device given (args: the device).
int child_pool_without_access(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    std::printf("a kernel writes 1 MiB of the pool's memory, no access given...\n");
    kernel_without_access();
    std::printf("the kernel finished\n");
    return 0;
}

tutorial::Result run_pinned_pool(tutorial::Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrHostMemoryPoolsSupported) != 1) {
        return ctx.skip("hostMemoryPoolsSupported = 0: this device has no pools of host memory");
    }
    const std::size_t bytes = ctx.size_or(ctx.quick() ? 16 * tutorial::MiB : 64 * tutorial::MiB);
    const int runs = ctx.quick() ? 5 : 9;
    Found seen = walkthrough(ctx.device, bytes);  // the warm-up
    const auto again = [&] { return time_rounds(ctx.device, bytes, runs, seen); };
    const Medians m = again();

    print_measures(ctx.device, bytes, runs, m, seen);

    std::printf(
        "A kernel writes the pool's memory before any cudaMemPoolSetAccess (in a child):\n");
    const tutorial::ChildResult child = tutorial::run_child(
        "pool_without_access", std::vector<std::string>{std::to_string(ctx.device)});
    tutorial::print_child_output(child);
    std::printf("   The child %s.\n\n", child.describe().c_str());

    ctx.claim(tutorial::documented(
        "cpu_uses_pool", "the CPU uses a host pool's memory without any access call", seen.cpu_used,
        seen.cpu_used ? "it wrote and read it back" : "it read back other values",
        "the pool's memory is not the host's",
        tutorial::Entry{"Runtime API reference: cudaMemPoolCreate",
                        "cudaMemLocationTypeHost cudaMemLocationTypeHostNuma", "will"}));
    // cudaMemPoolSetAccess: each descriptor of its map gives one GPU the access it names, here
    // cudaMemAccessFlagsProtReadWrite ("Make the address range read-write accessible").
    ctx.claim(tutorial::documented(
        "kernel_after_access",
        "after cudaMemPoolSetAccess a kernel writes it and the CPU reads the values",
        seen.wrong == 0, format("%zu of %zu values wrong", seen.wrong, bytes / 4),
        "the grant did not reach the device, or the kernel's writes did not reach host memory",
        tutorial::Entry{"Runtime API reference: cudaMemPoolSetAccess", "descriptor gpu",
                        "instructs"}));
    ctx.claim(tutorial::observed(
        "no_access_faults",
        "without cudaMemPoolSetAccess a kernel's write fails with cudaErrorIllegalAddress",
        child.failed_with("cudaErrorIllegalAddress"), "the child " + child.describe(),
        "the cudaMemPoolCreate entry gives host pools the CPU's access only, and names no error "
        "for a device's use"));
    ctx.claim(tutorial::documented(
        "current_pool",
        "cudaMemGetMemPool gives back the pool cudaMemSetMemPool made current for pinned host "
        "memory",
        seen.current_set && seen.default_differs,
        seen.current_set ? "the same pool, and the default host pool is another" : "another pool",
        "the location or the allocation type did not match",
        tutorial::Entry{"Runtime API reference: cudaMemGetMemPool", "cudaMemSetMemPool",
                        "returns"}));
    // Pinning costs per page: with a few pages, cudaMallocHost costs little more than the calls.
    ctx.claim(tutorial::at_least("pool_allocates_faster",
                                 "a warm pool allocates pinned memory faster than cudaMallocHost",
                                 m.malloc_host_ms / m.pool_ms, 3.0, "x",
                                 "the pool gave its memory back between allocations (release "
                                 "threshold)")
                  .again([&] {
                      const Medians n = again();
                      return n.malloc_host_ms / n.pool_ms;
                  }),
              tutorial::why_too_small(bytes, 1 << 20,
                                      "cudaMallocHost of a few pages costs little more than "
                                      "the pool's calls"));
    ctx.claim(tutorial::at_least("pool_copies_alike",
                                 "the pool's memory copies to the GPU as fast as cudaMallocHost's",
                                 m.copy_malloc_host_ms / m.copy_pool_ms, 0.8, "x",
                                 "the pool's pages are not pinned, or the copies met other traffic")
                  .again([&] {
                      const Medians n = again();
                      return n.copy_malloc_host_ms / n.copy_pool_ms;
                  }),
              tutorial::why_too_small(bytes, 1 << 20,
                                      "a copy this small is mostly its fixed cost, and one slow "
                                      "copy decides"));
    // A kernel's fault without the grant is observed above: the verdict rests on the CPU's use,
    // the kernel's use after the grant and the current pool.
    return ctx.verdict(seen.cpu_used && seen.wrong == 0 && seen.current_set,
                       format("the CPU used the pool's memory, and after the grant a kernel (%zu "
                              "wrong); the current host pool could be set and read back",
                              seen.wrong));
}

TUTORIAL_SECTION(pinned_pool, run_pinned_pool);
TUTORIAL_CHILD(pool_without_access, child_pool_without_access);
