// Checks of section host_pointer_in_kernel: runs ../host_pointer_in_kernel.cu's walkthrough and
// times its steps (the kernel over pinned host memory, over device memory, and the pinned copy,
// which take turns in it), prints the rates, and judges them against the copy, the PCIe link's
// limit (where Linux reports one and it is the host link) and device memory.
#include "01_uva/host_pointer_in_kernel.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <functional>
#include <string>

namespace {

// Medians over the walkthrough's rounds, in milliseconds, and what it found wrong.
struct Medians {
    double host_ms, device_ms, copy_ms;
};

Medians time_rounds(std::size_t bytes, int rounds, Found& found) {
    tutorial::StepTimes times;
    const Found f = walkthrough(bytes, rounds);
    found.wrong += f.wrong;
    found.same_address = found.same_address && f.same_address;
    found.sums_wrong += f.sums_wrong;
    return {times.median_ms(host_read), times.median_ms(device_read), times.median_ms(copy_up)};
}

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

void print_rates(std::size_t bytes, int rounds, const Medians& m, int device) {
    const double host_gbps = tutorial::gb_per_s(bytes, m.host_ms);
    const double device_gbps = tutorial::gb_per_s(bytes, m.device_ms);
    const double peak_gbps = tutorial::peak_memory_gbps(device);
    std::printf("Reading %s with one kernel (16-byte loads), median of %d rounds:\n",
                tutorial::format_bytes(bytes).c_str(), rounds);
    tutorial::Table table(
        {{"kernel reads"}, {"ms", tutorial::Align::right}, {"GB/s", tutorial::Align::right}});
    table.add_row({"pinned host memory (over the host link)", tutorial::format("%.3f", m.host_ms),
                   tutorial::format("%.1f", host_gbps)});
    table.add_row({"device memory", tutorial::format("%.3f", m.device_ms),
                   tutorial::format("%.1f", device_gbps)});
    table.add_row({"(for comparison: pinned cudaMemcpy up)", tutorial::format("%.3f", m.copy_ms),
                   tutorial::format("%.1f", tutorial::gb_per_s(bytes, m.copy_ms))});
    table.print();
    std::printf(
        "\nThe device memory read reached %.0f%% of its %.0f GB/s peak (memory clock x 2 x bus\n"
        "width). Data used more than once, or by many threads, belongs in device memory;\n"
        "zero-copy access suits data touched once.\n\n",
        100.0 * device_gbps / peak_gbps, peak_gbps);
}

void claim_rates(tutorial::Context& ctx, std::size_t bytes, const Medians& m,
                 const std::function<Medians()>& again) {
    // The physical limit where Linux reports a PCIe link (sysfs) and it is the host link.
    std::string link;
    const double link_gbps = tutorial::pcie_link_gbps(ctx.device, &link);
    const std::string no_link_limit = why_no_pcie_limit(ctx.device, link_gbps);
    if (no_link_limit.empty())
        std::printf("The link: %s, %.1f GB/s each way.\n\n", link.c_str(), link_gbps);
    const double host_gbps = tutorial::gb_per_s(bytes, m.host_ms);
    // Below these sizes launch overhead, not the link or the memory, sets both rates.
    const std::size_t link_least = std::size_t{1} << 20;
    const std::size_t device_least = std::size_t{8} << 20;
    ctx.claim(tutorial::at_least(
                  "at_host_link_speed",
                  "a kernel reading pinned host memory runs at the host link's speed "
                  "(its GB/s / a pinned copy's)",
                  m.copy_ms / m.host_ms, 0.4, "x",
                  "the kernel's reads over the link were not kept in flight in enough numbers: "
                  "too few threads, or a link slower for reads than for the copy engine's writes")
                  .again([&] {
                      const Medians n = again();
                      return n.copy_ms / n.host_ms;
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
                return link_gbps > 0 ? tutorial::gb_per_s(bytes, again().host_ms) / link_gbps : 0.0;
            });
    if (link_gbps <= 0) within_link.seen = tutorial::format("%.1f GB/s", host_gbps);
    ctx.claim(within_link, no_link_limit);
    ctx.claim(tutorial::at_least("device_many_times_faster",
                                 "the same kernel reads device memory many times faster",
                                 m.host_ms / m.device_ms, 10.0, "x",
                                 "the device read did not leave launch overhead behind, or the "
                                 "host read was not over the link")
                  .again([&] {
                      const Medians n = again();
                      return n.host_ms / n.device_ms;
                  }),
              tutorial::why_too_small(bytes, device_least,
                                      "a read this small is launch overhead in device memory "
                                      "too, so it cannot show device memory's rate"));
}

}  // namespace

tutorial::Result run_host_pointer_in_kernel(tutorial::Context& ctx) {
    const std::size_t bytes =
        ctx.size_or(ctx.quick() ? (std::size_t{16} << 20) : (std::size_t{1} << 30)) / 16 * 16;
    const int rounds = ctx.iters_or(ctx.quick() ? 3 : 10);
    // A warm-up first, untimed: the first launch of a kernel also loads it.
    Found found = walkthrough(bytes < (std::size_t{1} << 20) ? bytes : (std::size_t{1} << 20), 1);
    const Medians m = time_rounds(bytes, rounds, found);
    std::printf(
        "A kernel doubled-plus-one every value of %s through the cudaHostAlloc pointer\n"
        "(%zu wrong after cudaDeviceSynchronize, warm-up and timed runs together);\n"
        "cudaHostGetDevicePointer returns %s.\n\n",
        tutorial::format_bytes(bytes).c_str(), found.wrong,
        found.same_address ? "the same address" : "a DIFFERENT address");
    print_rates(bytes, rounds, m, ctx.device);
    claim_rates(ctx, bytes, m, [&] { return time_rounds(bytes, rounds, found); });
    return ctx.verdict(found.wrong == 0 && found.same_address && found.sums_wrong == 0,
                       tutorial::format("kernel writes through the host pointer verified, "
                                        "cudaHostGetDevicePointer gave the same address, %d "
                                        "timed sums differ from the CPU's",
                                        found.sums_wrong));
}

TUTORIAL_SECTION(host_pointer_in_kernel, run_host_pointer_in_kernel);
