// Section `bandwidth`: host <-> device copy speed from pageable, pinned, write-combined and
// registered memory, from a few KiB (where a copy's fixed cost dominates) to hundreds of MiB
// (where the PCIe link does).
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/patterns.hpp"
#include "common/report.hpp"
#include "common/timing.hpp"
#include "sections.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

using tutorial::format;

namespace {

// The four kinds of host memory, each allocated with its own call and freed with the matching
// one (chapter 02's `misuse` shows what a mismatch does).
struct HostBuffers {
    void* pageable = nullptr;
    void* pinned = nullptr;
    void* write_combined = nullptr;
    void* registered = nullptr;

    explicit HostBuffers(std::size_t bytes) {
        pageable = std::malloc(bytes);
        CUDA_CHECK(cudaMallocHost(&pinned, bytes));
        CUDA_CHECK(cudaHostAlloc(&write_combined, bytes, cudaHostAllocWriteCombined));
        registered = std::malloc(bytes);  // pinned afterwards, where it is
        CUDA_CHECK(cudaHostRegister(registered, bytes, cudaHostRegisterDefault));
    }
    ~HostBuffers() {
        CUDA_CHECK(cudaHostUnregister(registered));
        std::free(registered);
        CUDA_CHECK(cudaFreeHost(write_combined));
        CUDA_CHECK(cudaFreeHost(pinned));
        std::free(pageable);
    }
    HostBuffers(const HostBuffers&) = delete;
    HostBuffers& operator=(const HostBuffers&) = delete;
};

struct Kind {
    const char* name;
    std::uint32_t* host;
};
constexpr std::size_t pageable = 0;  // where those two stand in the list of kinds
constexpr std::size_t pinned = 1;

std::vector<std::size_t> sizes_to_measure(const tutorial::Context& ctx) {
    if (ctx.options.size != 0) return {ctx.options.size};
    if (ctx.quick()) return {4 << 10, 1 << 20, 8 << 20};
    return {4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20};
}

struct Timing {
    int warmup;
    int runs;
    std::size_t bytes_per_round;  // small copies are repeated within a round to last long enough
};

struct Totals {
    int checked = 0;
    int failed = 0;
    double pinned_small_us = 0.0;    // one pinned host -> device copy of the smallest size
    double pinned_large_gbps = 0.0;  // pinned host -> device at the largest size
    double large_ratio[2] = {};      // pinned / pageable at the largest size: [0] up, [1] down
};

// One table: copies of every size in one direction, between `device` and each kind of host
// memory; each copy's data is then checked where it landed.
void measure_direction(bool to_device, const std::vector<std::size_t>& sizes,
                       const std::vector<Kind>& kinds, std::uint32_t* device, const Timing& timing,
                       Totals& totals) {
    std::vector<tutorial::Column> columns = {{"size", tutorial::Align::right}};
    for (const Kind& kind : kinds) columns.push_back({kind.name, tutorial::Align::right});
    columns.push_back({"pinned / pageable", tutorial::Align::right});
    tutorial::Table table(columns);
    table.named(to_device ? "host_to_device" : "device_to_host");
    std::uint32_t seed = to_device ? 1 : 1000;
    for (std::size_t bytes : sizes) {
        const std::size_t count = bytes / sizeof(std::uint32_t);
        const int repeats =
            static_cast<int>(std::clamp<std::size_t>(timing.bytes_per_round / bytes, 1, 100));
        std::vector<std::string> row = {tutorial::format_bytes(bytes)};
        std::vector<double> gbps;
        for (std::size_t k = 0; k < kinds.size(); ++k) {
            const Kind& kind = kinds[k];
            // Fill the source, and the destination with something else so that a copy that
            // did nothing shows.
            if (to_device) {
                fill_on_host(kind.host, count, seed);
                fill_on_device(device, count, ~seed);
            } else {
                fill_on_device(device, count, seed);
                fill_on_host(kind.host, count, ~seed);
            }
            void* destination = to_device ? static_cast<void*>(device) : kind.host;
            const void* source = to_device ? static_cast<void*>(kind.host) : device;
            const double ms = tutorial::median_event_ms(
                timing.warmup, timing.runs,
                [&] { CUDA_CHECK(cudaMemcpy(destination, source, bytes, cudaMemcpyDefault)); },
                repeats);
            const std::size_t wrong = to_device ? mismatches_on_device(device, count, seed)
                                                : mismatches_on_host(kind.host, count, seed);
            ++totals.checked;
            totals.failed += wrong == 0 ? 0 : 1;
            gbps.push_back(tutorial::gb_per_s(bytes, ms));
            row.push_back(wrong == 0 ? format("%.1f", gbps.back()) : format("%zu wrong", wrong));
            if (to_device && k == pinned && bytes == sizes.front()) {
                totals.pinned_small_us = ms * 1e3;
            }
            ++seed;
        }
        if (to_device && bytes == sizes.back()) totals.pinned_large_gbps = gbps[pinned];
        if (bytes == sizes.back())
            totals.large_ratio[to_device ? 0 : 1] = gbps[pinned] / gbps[pageable];
        row.push_back(format("%.1fx", gbps[pinned] / gbps[pageable]));
        table.add_row(row);
    }
    std::printf("\n%s (GB/s):\n", to_device ? "host -> device" : "device -> host");
    table.print();
}

}  // namespace

tutorial::Result run_bandwidth(tutorial::Context& ctx) {
    const std::vector<std::size_t> sizes = sizes_to_measure(ctx);
    const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
    const Timing timing{ctx.quick() ? 1 : 2, ctx.iters_or(ctx.quick() ? 3 : 7),
                        ctx.quick() ? std::size_t{4} << 20 : std::size_t{64} << 20};
    std::printf(
        "cudaMemcpy between a device buffer and four kinds of host buffer, in both directions.\n"
        "Each entry: events around back-to-back copies, %d warm-up and the median of %d rounds;\n"
        "GB/s = 1e9 bytes per second. Every copy's data is then checked where it landed.\n",
        timing.warmup, timing.runs);

    std::uint32_t* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, largest));
    const HostBuffers hosts(largest);
    const std::vector<Kind> kinds = {
        // in the order of `pageable` and `pinned` above
        {"pageable", static_cast<std::uint32_t*>(hosts.pageable)},
        {"pinned", static_cast<std::uint32_t*>(hosts.pinned)},
        {"write-combined", static_cast<std::uint32_t*>(hosts.write_combined)},
        {"registered", static_cast<std::uint32_t*>(hosts.registered)},
    };
    for (const Kind& kind : kinds) fill_on_host(kind.host, largest / 4, 0);  // touch every page

    Totals totals;
    measure_direction(true, sizes, kinds, device, timing, totals);
    measure_direction(false, sizes, kinds, device, timing, totals);
    CUDA_CHECK(cudaFree(device));

    if (sizes.size() > 1) {
        const double wire_us =
            static_cast<double>(sizes.front()) / (totals.pinned_large_gbps * 1e9) * 1e6;
        std::printf(
            "\nA pinned copy of %s takes %.2f us; at the %.1f GB/s of the largest pinned copy\n"
            "its bytes need only %.2f us. Small copies are latency-bound: the call, starting the\n"
            "copy engine and reporting completion cost the same for 4 bytes as for 4 KiB. Large\n"
            "pinned copies are limited by the PCIe link, pageable ones by the CPU copying each\n"
            "chunk into the driver's pinned staging buffer first.\n",
            tutorial::format_bytes(sizes.front()).c_str(), totals.pinned_small_us,
            totals.pinned_large_gbps, wire_us);
    }
    const std::string large = tutorial::format_bytes(sizes.back());
    const char* why_pageable =
        "the pageable buffer was copied as fast as the pinned one, so the staging copy through "
        "the CPU cost nothing extra: a very fast CPU memory system, or a size small enough to stay "
        "in the CPU's caches";
    // The lesson needs a link much faster than the CPU's staging copy (several GB/s): on PCIe
    // Gen3 and narrower links the two are close, and pinned memory gains little.
    const double link = tutorial::pcie_link_gbps(ctx.device);
    const std::string slow_link =
        link > 0.0 && link < 20.0
            ? format("the PCIe link carries %.1f GB/s, not much more than the CPU stages "
                     "pageable memory at",
                     link)
            : "";
    for (int direction = 0; direction < 2; ++direction) {
        ctx.claim(tutorial::at_least(format("pinned beats pageable for a %s copy %s", large.c_str(),
                                            direction == 0 ? "host -> device" : "device -> host"),
                                     totals.large_ratio[direction], 1.5, "x", why_pageable),
                  slow_link);
    }
    if (sizes.size() > 1) {
        const double wire_us =
            static_cast<double>(sizes.front()) / (totals.pinned_large_gbps * 1e9) * 1e6;
        ctx.claim(tutorial::at_least(
            format("a pinned %s copy is latency-bound (its time / its bytes at the %s rate)",
                   tutorial::format_bytes(sizes.front()).c_str(), large.c_str()),
            totals.pinned_small_us / wire_us, 5.0, "x",
            "the fixed cost of a copy (the call, starting the copy engine, completion) is "
            "unusually small here, or the largest copy was too slow to set the rate"));
    }
    return ctx.verdict(totals.failed == 0, format("%d of %d timed copies delivered exactly the "
                                                  "data that was sent",
                                                  totals.checked - totals.failed, totals.checked));
}
