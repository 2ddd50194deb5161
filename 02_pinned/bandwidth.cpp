// Section `bandwidth`: host <-> device copy speed from pageable, pinned, write-combined and
// registered memory, from a few KiB (where a copy's fixed cost dominates) to hundreds of MiB
// (where the PCIe link does).
#include "common/buffer.hpp"
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/report.hpp"
#include "common/timing.hpp"
#include "copy_timing.hpp"
#include "sections.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

using tutorial::Buffer;
using tutorial::format;
using tutorial::MemoryKind;

namespace {

const MemoryKind host_kinds[] = {MemoryKind::pageable, MemoryKind::pinned,
                                 MemoryKind::write_combined, MemoryKind::registered};

std::vector<std::size_t> sizes_to_measure(const tutorial::Context& ctx) {
    if (ctx.options.size != 0) return {ctx.options.size};
    if (ctx.quick()) return {4 << 10, 1 << 20, 8 << 20};
    return {4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20};
}

}  // namespace

tutorial::Result run_bandwidth(tutorial::Context& ctx) {
    const std::vector<std::size_t> sizes = sizes_to_measure(ctx);
    const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
    const int warmup = ctx.quick() ? 1 : 2;
    const int runs = ctx.iters_or(ctx.quick() ? 3 : 7);
    // Small copies are repeated back to back inside one timed round so that the round lasts
    // long enough for the events to resolve it.
    const std::size_t bytes_per_round = ctx.quick() ? (4 << 20) : (64 << 20);
    std::printf(
        "cudaMemcpy between a device buffer and four kinds of host buffer, in both directions.\n"
        "Each entry: events around back-to-back copies, %d warm-up and the median of %d rounds;\n"
        "GB/s = 1e9 bytes per second. Every copy's data is then checked where it landed.\n",
        warmup, runs);

    const Buffer device(MemoryKind::device, largest);
    std::vector<Buffer> hosts;
    for (MemoryKind kind : host_kinds) {
        hosts.emplace_back(kind, largest);
        fill(hosts.back(), largest / sizeof(std::uint32_t), 0);  // touch every page once
    }

    int checked = 0;
    int failed = 0;
    std::uint32_t seed = 1;
    double pinned_small_us = 0.0;    // one pinned host -> device copy of the smallest size
    double pinned_large_gbps = 0.0;  // pinned host -> device at the largest size
    for (const bool to_device : {true, false}) {
        std::printf("\n%s (GB/s):\n", to_device ? "host -> device" : "device -> host");
        std::vector<tutorial::Column> columns = {{"size", tutorial::Align::right}};
        for (MemoryKind kind : host_kinds) {
            columns.push_back({tutorial::kind_name(kind), tutorial::Align::right});
        }
        columns.push_back({"pinned / pageable", tutorial::Align::right});
        tutorial::Table table(columns);
        for (std::size_t bytes : sizes) {
            const std::size_t count = bytes / sizeof(std::uint32_t);
            const int repeats =
                static_cast<int>(std::clamp<std::size_t>(bytes_per_round / bytes, 1, 100));
            std::vector<std::string> row = {tutorial::format_bytes(bytes)};
            double pageable_gbps = 0.0;
            double pinned_gbps = 0.0;
            for (const Buffer& host : hosts) {
                const Buffer& source = to_device ? host : device;
                const Buffer& destination = to_device ? device : host;
                fill(source, count, seed);
                fill(destination, count, ~seed);  // so that a copy that did nothing shows
                const double ms =
                    time_copy_ms(destination.get(), source.get(), bytes, repeats, warmup, runs);
                const std::size_t wrong = mismatches(destination, count, seed);
                ++checked;
                failed += wrong == 0 ? 0 : 1;
                const double gbps = tutorial::gb_per_s(bytes, ms);
                row.push_back(wrong == 0 ? format("%.1f", gbps) : format("%zu wrong", wrong));
                if (host.kind() == MemoryKind::pageable) pageable_gbps = gbps;
                if (host.kind() == MemoryKind::pinned) {
                    pinned_gbps = gbps;
                    if (to_device && bytes == sizes.front()) pinned_small_us = ms * 1e3;
                    if (to_device && bytes == largest) pinned_large_gbps = gbps;
                }
                ++seed;
            }
            row.push_back(format("%.1fx", pinned_gbps / pageable_gbps));
            table.add_row(row);
        }
        table.print();
    }

    if (sizes.size() > 1) {
        const double wire_us = static_cast<double>(sizes.front()) / (pinned_large_gbps * 1e9) * 1e6;
        std::printf(
            "\nA pinned copy of %s takes %.2f us; at the %.1f GB/s of the largest pinned copy\n"
            "its bytes need only %.2f us. Small copies are latency-bound: the call, starting the\n"
            "copy engine and reporting completion cost the same for 4 bytes as for 4 KiB. Large\n"
            "pinned copies are limited by the PCIe link, pageable ones by the CPU copying each\n"
            "chunk into the driver's pinned staging buffer first.\n",
            tutorial::format_bytes(sizes.front()).c_str(), pinned_small_us, pinned_large_gbps,
            wire_us);
    }
    return ctx.verdict(failed == 0, format("%d of %d timed copies delivered exactly the data "
                                           "that was sent",
                                           checked - failed, checked));
}
