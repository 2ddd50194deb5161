// Checks of section bandwidth: runs the walkthrough of ../bandwidth.cpp at every size (it times
// both directions and checks each kind's data), tables the rates, and judges pinned against
// pageable.
#include "02_pinned/bandwidth.cpp"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"

#include <string>

using tutorial::format;

namespace {

constexpr int pageable = 0;  // where those two stand among the walkthrough's kinds
constexpr int pinned = 1;

std::vector<std::size_t> sizes_to_measure(const tutorial::Context& ctx) {
    if (const std::size_t given = ctx.size_or(0); given != 0) return {given};
    if (ctx.quick()) return {4 << 10, 1 << 20, 8 << 20};
    return {4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20};
}

struct Timing {
    int warmup;
    int runs;
    std::size_t bytes_per_sample;  // copies are repeated within a sample to move this much
    double link_gbps;              // the PCIe link's limit per direction, 0 where unknown
};

// The walkthrough at one size. A page-locked kind far below the best page-locked one (they all
// use the same link) is measured again with the others, and its faster median kept; `remeasured`
// counts those.
Found rates_at(std::size_t bytes, const Timing& timing, int& remeasured) {
    Found f = walkthrough(bytes, timing.warmup, timing.runs, timing.bytes_per_sample);
    const auto low = [](const double(&gbps)[kinds]) {
        const double best = *std::max_element(gbps + pinned, gbps + kinds);
        return std::any_of(gbps + pinned, gbps + kinds, [&](double g) { return g < 0.85 * best; });
    };
    if (bytes >= (1 << 20) && (low(f.to_device) || low(f.to_host))) {
        const Found again = walkthrough(bytes, timing.warmup, timing.runs, timing.bytes_per_sample);
        for (int k = pinned; k < kinds; ++k) {
            f.to_device[k] = std::max(f.to_device[k], again.to_device[k]);
            f.to_host[k] = std::max(f.to_host[k], again.to_host[k]);
        }
        f.copies_right = std::min(f.copies_right, again.copies_right);
        ++remeasured;
    }
    return f;
}

void print_table(bool to_device, const std::vector<std::size_t>& sizes,
                 const std::vector<Found>& found, const Timing& timing) {
    std::vector<tutorial::Column> columns = {{"size", tutorial::Align::right}};
    for (const char* name : kind_names) columns.push_back({name, tutorial::Align::right});
    columns.push_back({"pinned / pageable", tutorial::Align::right});
    if (timing.link_gbps > 0) columns.push_back({"pinned, % of link", tutorial::Align::right});
    tutorial::Table table(columns);
    table.named(to_device ? "host_to_device" : "device_to_host");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const double* gbps = to_device ? found[i].to_device : found[i].to_host;
        std::vector<std::string> row = {tutorial::format_bytes(sizes[i])};
        for (int k = 0; k < kinds; ++k) row.push_back(format("%.1f", gbps[k]));
        row.push_back(format("%.1fx", gbps[pinned] / gbps[pageable]));
        if (timing.link_gbps > 0)
            row.push_back(format("%.0f%%", 100 * gbps[pinned] / timing.link_gbps));
        table.add_row(row);
    }
    std::printf("\n%s (GB/s):\n", to_device ? "host -> device" : "device -> host");
    table.print();
}

// How the copies are timed, said once; the link's limit read from the operating system.
Timing how_to_time(const tutorial::Context& ctx) {
    std::string link_words;
    const double link = tutorial::pcie_link_gbps(ctx.device, &link_words);
    const Timing timing{ctx.quick() ? 1 : 2, ctx.iters_or(ctx.quick() ? 3 : 9),
                        ctx.quick() ? std::size_t{4} << 20 : std::size_t{512} << 20, link};
    std::printf(
        "cudaMemcpy between a device buffer and four kinds of host buffer, in both directions.\n"
        "Each entry: events around back-to-back copies, the four kinds taking turns in each\n"
        "round, %d warm-up and the median of %d rounds; GB/s = 1e9 bytes per second. Every\n"
        "kind's data is then checked where it landed.\n",
        timing.warmup, timing.runs);
    if (link > 0) {
        std::printf(
            "The PCIe link (from /sys/bus/pci): %s = %.1f GB/s per direction after its\n"
            "line code, the limit no copy can pass.\n",
            link_words.c_str(), link);
    } else {
        std::printf(
            "The PCIe link's rate cannot be read here (no /sys/bus/pci entry for this "
            "GPU).\n");
    }
    return timing;
}

// A pinned copy of the smallest size against its bytes at the largest size's pinned rate.
double latency_ratio(const Found& smallest, std::size_t small_bytes, const Found& largest) {
    const double small_us = static_cast<double>(small_bytes) / (smallest.to_device[pinned] * 1e3);
    const double wire_us = static_cast<double>(small_bytes) / (largest.to_device[pinned] * 1e3);
    return small_us / wire_us;
}

void claim_rates(tutorial::Context& ctx, const std::vector<std::size_t>& sizes,
                 const std::vector<Found>& found, const Timing& timing) {
    const std::size_t largest = sizes.back();
    const std::string large = tutorial::format_bytes(largest);
    // The lesson needs a link much faster than the CPU's staging copy (several GB/s): on PCIe
    // Gen3 and narrower links the two are close, and pinned memory gains little. And it needs a
    // size: a small copy is its fixed cost (the call, the copy engine's start, the completion).
    std::string not_judged =
        timing.link_gbps > 0.0 && timing.link_gbps < 20.0
            ? format(
                  "the PCIe link carries %.1f GB/s, not much more than the CPU stages "
                  "pageable memory at",
                  timing.link_gbps)
            : "";
    if (not_judged.empty())
        not_judged = tutorial::why_too_small(largest, 1 << 20,
                                             "a copy this small is mostly its fixed cost (the "
                                             "call, the copy engine's start), pinned or not");
    int dummy = 0;
    const auto up = [](const Found& f) { return f.to_device[pinned] / f.to_device[pageable]; };
    const auto down = [](const Found& f) { return f.to_host[pinned] / f.to_host[pageable]; };
    const char* why_not =
        "the pageable buffer was copied as fast as the pinned one, so the staging copy through "
        "the CPU cost nothing extra: a very fast CPU memory system";
    ctx.claim(tutorial::at_least(
                  "pinned_beats_pageable_up",
                  format("pinned beats pageable for a %s copy host -> device", large.c_str()),
                  up(found.back()), 1.5, "x", why_not)
                  .again([&] { return up(rates_at(largest, timing, dummy)); }),
              not_judged);
    ctx.claim(tutorial::at_least(
                  "pinned_beats_pageable_down",
                  format("pinned beats pageable for a %s copy device -> host", large.c_str()),
                  down(found.back()), 1.5, "x", why_not)
                  .again([&] { return down(rates_at(largest, timing, dummy)); }),
              not_judged);
    if (sizes.size() < 2) return;
    ctx.claim(tutorial::at_least(
                  "latency_bound",
                  format("a pinned %s copy is latency-bound (its time / its bytes at the %s rate)",
                         tutorial::format_bytes(sizes.front()).c_str(), large.c_str()),
                  latency_ratio(found.front(), sizes.front(), found.back()), 5.0, "x",
                  "the fixed cost of a copy (the call, starting the copy engine, completion) is "
                  "unusually small here, or the largest copy was too slow to set the rate")
                  .again([&] {
                      return latency_ratio(rates_at(sizes.front(), timing, dummy), sizes.front(),
                                           rates_at(largest, timing, dummy));
                  }));
}

}  // namespace

tutorial::Result run_bandwidth(tutorial::Context& ctx) {
    const std::vector<std::size_t> sizes = sizes_to_measure(ctx);
    const Timing timing = how_to_time(ctx);
    std::vector<Found> found;
    int remeasured = 0;
    int right = 0;
    for (std::size_t bytes : sizes) {
        found.push_back(rates_at(bytes, timing, remeasured));
        right += found.back().copies_right;
    }
    print_table(true, sizes, found, timing);
    print_table(false, sizes, found, timing);
    if (remeasured > 0) {
        std::printf(
            "\nAt %d size%s a page-locked figure far below the best page-locked one was measured "
            "again (the faster median is shown).\n",
            remeasured, remeasured == 1 ? "" : "s");
    }
    if (sizes.size() > 1) {
        const double small_us =
            static_cast<double>(sizes.front()) / (found.front().to_device[pinned] * 1e3);
        const double wire_us =
            static_cast<double>(sizes.front()) / (found.back().to_device[pinned] * 1e3);
        std::printf(
            "\nA pinned copy of %s takes %.2f us; at the %.1f GB/s of the largest pinned copy\n"
            "its bytes need only %.2f us. Small copies are latency-bound: the call, starting the\n"
            "copy engine and reporting completion cost the same for 4 bytes as for 4 KiB. Large\n"
            "pinned copies are limited by the PCIe link, pageable ones by the CPU copying each\n"
            "chunk into the driver's pinned staging buffer first.\n",
            tutorial::format_bytes(sizes.front()).c_str(), small_us, found.back().to_device[pinned],
            wire_us);
    }
    claim_rates(ctx, sizes, found, timing);
    const int copies = static_cast<int>(sizes.size()) * kinds * 2;
    return ctx.verdict(right == copies, format("%d of %d timed copies delivered exactly the data "
                                               "that was sent",
                                               right, copies));
}

TUTORIAL_SECTION(bandwidth, run_bandwidth);
