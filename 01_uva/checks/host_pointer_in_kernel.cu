// Checks of section host_pointer_in_kernel: runs ../host_pointer_in_kernel.cu's kernel through the
// host pointer and its timed reads, prints the rates, and judges them against a pinned copy, the
// PCIe link's limit (where Linux reports one and it is the host link) and device memory.
#include "01_uva/host_pointer_in_kernel.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"

#include <cstdio>
#include <string>

namespace {

// Why the PCIe link sysfs describes is not the limit of the kernel's reads, or "" when it is. On
// NVLink-C2C hosts (Grace Hopper) the GPU still has a PCIe function in sysfs, but host memory
// comes over NVLink: the link then supports native atomics with the host, or the GPU uses the
// host's page tables.
std::string why_no_pcie_limit(int device, double link_gbps) {
    if (tutorial::device_attribute(device, cudaDevAttrHostNativeAtomicSupported) == 1 ||
        tutorial::device_attribute(device, cudaDevAttrPageableMemoryAccessUsesHostPageTables) ==
            1) {
        return "the host link is not PCIe (hostNativeAtomicSupported or "
               "pageableMemoryAccessUsesHostPageTables is 1, as over NVLink-C2C), so the PCIe "
               "link sysfs describes is not its limit";
    }
    if (link_gbps <= 0) {
        return "Linux describes no PCIe link for this GPU in sysfs (current_link_speed, "
               "current_link_width), so there is no link limit to compare with";
    }
    return "";
}

}  // namespace

tutorial::Result run_host_pointer_in_kernel(tutorial::Context& ctx) {
    const std::size_t direct_count = 1 << 20;
    const Direct direct = write_through_host_pointer(direct_count);
    std::printf(
        "A kernel doubled-plus-one %zu values through the cudaHostAlloc pointer %p:\n"
        "%zu wrong after cudaDeviceSynchronize. cudaHostGetDevicePointer returns %p, %s.\n\n",
        direct_count, direct.host, direct.wrong, direct.device_view,
        direct.device_view == direct.host ? "the same address" : "a DIFFERENT address");
    const bool direct_ok = direct.wrong == 0 && direct.device_view == direct.host;

    const std::size_t bytes =
        ctx.size_or(ctx.quick() ? (std::size_t{16} << 20) : (std::size_t{1} << 30)) / 16 * 16;
    const int iters = ctx.iters_or(ctx.quick() ? 3 : 10);
    const Reads r = time_reads(bytes, iters);
    const Measurement& over_host = r.over_host;
    const Measurement& over_device = r.over_device;
    const double copy_ms = r.copy_ms;
    const unsigned long long expected = r.expected;

    const double host_gbps = tutorial::gb_per_s(bytes, over_host.ms);
    const double device_gbps = tutorial::gb_per_s(bytes, over_device.ms);
    const double copy_gbps = tutorial::gb_per_s(bytes, copy_ms);
    const double peak_gbps = tutorial::peak_memory_gbps(ctx.device);
    std::printf("Reading %s with one kernel (16-byte loads), median of %d rounds:\n",
                tutorial::format_bytes(bytes).c_str(), iters);
    tutorial::Table table({{"kernel reads"},
                           {"ms", tutorial::Align::right},
                           {"GB/s", tutorial::Align::right},
                           {"sum correct"}});
    table.add_row({"pinned host memory (over PCIe)", tutorial::format("%.3f", over_host.ms),
                   tutorial::format("%.1f", host_gbps), over_host.sum == expected ? "yes" : "NO"});
    table.add_row({"device memory", tutorial::format("%.3f", over_device.ms),
                   tutorial::format("%.1f", device_gbps),
                   over_device.sum == expected ? "yes" : "NO"});
    table.add_row({"(for comparison: pinned cudaMemcpy up)", tutorial::format("%.3f", copy_ms),
                   tutorial::format("%.1f", copy_gbps), ""});
    table.print();
    std::printf(
        "\nThe device memory read reached %.0f%% of its %.0f GB/s peak (memory clock x 2 x bus\n"
        "width). Data used more than once, or by many threads, belongs in device memory;\n"
        "zero-copy access suits data touched once.\n\n",
        100.0 * device_gbps / peak_gbps, peak_gbps);
    // The physical limit where Linux reports a PCIe link (sysfs) and it is the host link.
    std::string link;
    const double link_gbps = tutorial::pcie_link_gbps(ctx.device, &link);
    const std::string no_link_limit = why_no_pcie_limit(ctx.device, link_gbps);
    if (no_link_limit.empty())
        std::printf("The link: %s, %.1f GB/s each way.\n\n", link.c_str(), link_gbps);
    // A claim that falls short is measured again: the three reads timed afresh, in turns.
    const auto again = [&] { return time_reads(bytes, iters); };
    // Below these sizes launch overhead, not the link or the memory, sets both rates.
    const std::size_t link_least = std::size_t{1} << 20;
    const std::size_t device_least = std::size_t{8} << 20;
    ctx.claim(tutorial::at_least(
                  "at_pcie_speed",
                  "a kernel reading pinned host memory runs at PCIe speed (its GB/s / a pinned "
                  "copy's)",
                  host_gbps / copy_gbps, 0.4, "x",
                  "the kernel's reads over the link were not kept in flight in enough numbers: "
                  "too few threads, or a link slower for reads than for the copy engine's writes")
                  .again([&] {
                      const Reads n = again();
                      return n.copy_ms / n.over_host.ms;
                  }),
              tutorial::why_too_small(bytes, link_least,
                                      "a read this small is launch overhead, for the kernel and "
                                      "the copy alike"));
    tutorial::Claim within_link =
        tutorial::at_most("within_link",
                          "...and no faster than the link allows (its GB/s / the link's limit)",
                          link_gbps > 0 ? host_gbps / link_gbps : 0.0, 1.0, "x",
                          "the data did not come over the link: was it cached on the GPU?")
            .again([&] {
                const Reads n = again();
                return link_gbps > 0 ? tutorial::gb_per_s(bytes, n.over_host.ms) / link_gbps : 0.0;
            });
    if (link_gbps <= 0) within_link.seen = tutorial::format("%.1f GB/s", host_gbps);
    ctx.claim(within_link, no_link_limit);
    ctx.claim(tutorial::at_least("device_many_times_faster",
                                 "the same kernel reads device memory many times faster",
                                 device_gbps / host_gbps, 10.0, "x",
                                 "the device read did not leave launch overhead behind, or the "
                                 "host read was not over the link")
                  .again([&] {
                      const Reads n = again();
                      return n.over_host.ms / n.over_device.ms;
                  }),
              tutorial::why_too_small(bytes, device_least,
                                      "a read this small is launch overhead in device memory "
                                      "too, so it cannot show device memory's rate"));

    return ctx.verdict(direct_ok && over_host.sum == expected && over_device.sum == expected,
                       "kernel writes through the host pointer verified, cudaHostGetDevicePointer "
                       "gave the same address, both timed sums match the CPU's");
}

TUTORIAL_SECTION(host_pointer_in_kernel, run_host_pointer_in_kernel);
