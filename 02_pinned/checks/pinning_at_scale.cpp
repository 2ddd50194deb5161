// Checks of section pinning_at_scale: runs the walkthrough of ../pinning_at_scale.cpp round after
// round (the four ways take turns in each), times its steps on the host's clock (the uploads by
// events), and judges the costs.
#include "02_pinned/pinning_at_scale.cpp"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

#include <fstream>
#include <string>

using tutorial::format;

namespace {

// The kernel's transparent huge page mode: "always", "madvise" or "never" (the bracketed word).
std::string thp_mode() {
    std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    std::getline(file, line);
    const std::size_t open = line.find('['), close = line.find(']');
    return open == std::string::npos || close == std::string::npos
               ? "unknown"
               : line.substr(open + 1, close - open - 1);
}

// Medians over rounds of the walkthrough: ms to get and to give back, GB/s of the upload.
struct Medians {
    double get_ms[ways], give_ms[ways], gbps[ways];
};

Medians time_rounds(std::size_t bytes, int threads, int runs, Found& seen) {
    tutorial::StepTimes times;
    for (int r = 0; r < runs; ++r) {
        const Found f = walkthrough(bytes, threads);
        seen.pinned = seen.pinned && f.pinned;
        seen.wrong += f.wrong;
        seen.huge = f.huge;
    }
    Medians m{};
    for (int w = 0; w < ways; ++w) {
        m.get_ms[w] = times.median_host_ms(steps[w].get);
        m.give_ms[w] = times.median_host_ms(steps[w].give);
        m.gbps[w] = tutorial::gb_per_s(bytes, times.median_ms(steps[w].upload));
    }
    return m;
}

double slowest_upload(const Medians& m) {
    return std::min({m.gbps[0], m.gbps[1], m.gbps[2], m.gbps[3]}) / m.gbps[malloc_host];
}

void print_table(int device, std::size_t bytes, const Medians& m, const Found& seen) {
    const double gib = static_cast<double>(bytes) / (1ull << 30);
    tutorial::Table table({{"how"},
                           {"get ms/GiB", tutorial::Align::right},
                           {"give back ms/GiB", tutorial::Align::right},
                           {"upload GB/s", tutorial::Align::right},
                           {"on huge pages", tutorial::Align::right}});
    for (int w = 0; w < ways; ++w) {
        table.add_row({steps[w].get.name, format("%.1f", m.get_ms[w] / gib),
                       format("%.1f", m.give_ms[w] / gib), format("%.1f", m.gbps[w]),
                       w == register_huge ? tutorial::format_bytes(seen.huge) : ""});
    }
    table.print();
    std::string link;
    const double pcie = tutorial::pcie_link_gbps(device, &link);
    if (pcie > 0.0) {
        std::printf(
            "\nThe link (%s) carries %.1f GB/s each way: the upload is bounded by the link,\n"
            "not by how the memory was pinned.\n\n",
            link.c_str(), pcie);
    } else {
        std::printf("\nThe upload is bounded by the link, not by how the memory was pinned.\n\n");
    }
}

}  // namespace

tutorial::Result run_pinning_at_scale(tutorial::Context& ctx) {
    // The upload's target must fit on the GPU: by default at most half of its free memory.
    const std::size_t bytes = ctx.size_or(
        tutorial::fit_in_free_memory(ctx.quick() ? (512 << 20) : (4ull << 30), 0.5, 2 << 20));
    const int runs = ctx.iters_or(3);
    const int threads =
        std::max(1, std::min(16, static_cast<int>(std::thread::hardware_concurrency())));
    const std::string thp = thp_mode();
    std::printf(
        "Pinning %s four ways: the walkthrough %d times, each way in turn in every round,\n"
        "timed on the host (medians): getting it (allocate, touch, pin) and giving it back; in\n"
        "between, one upload of all of it (events). Touching means one write per 4 KiB page.\n"
        "%d threads where it says T; transparent huge pages here: %s.\n\n",
        tutorial::format_bytes(bytes).c_str(), runs, threads, thp.c_str());
    Found seen{true, 0, 0};
    const auto again = [&] { return time_rounds(bytes, threads, runs, seen); };
    const Medians m = again();
    print_table(ctx.device, bytes, m, seen);
    // The per-page work these ways save needs many pages: with few, starting T threads and the
    // calls themselves weigh as much as the pages.
    const std::string small = tutorial::why_too_small(
        bytes, 256 << 20, "starting T threads and the calls themselves weigh as much as the pages");
    ctx.claim(
        tutorial::at_least("threads_pin_faster",
                           "T threads touching, then cudaHostRegister, pin faster than "
                           "cudaMallocHost (cudaMallocHost / T threads)",
                           m.get_ms[malloc_host] / m.get_ms[register_threads], 1.5, "x",
                           "page faults do not scale over threads on this kernel, or "
                           "cudaMallocHost is fast here")
            .again([&] {
                const Medians n = again();
                return n.get_ms[malloc_host] / n.get_ms[register_threads];
            }),
        threads < 4 ? format("%d CPU threads here; touching in parallel needs 4", threads) : small);
    const bool huge_used = seen.huge >= bytes / 2;
    ctx.claim(
        tutorial::at_least("huge_pages_cheaper",
                           "huge pages make it cheaper still (T threads, 4 KiB pages / "
                           "huge pages)",
                           m.get_ms[register_threads] / m.get_ms[register_huge], 1.3, "x",
                           "pinning costs per byte, not per page, here")
            .again([&] {
                const Medians n = again();
                return n.get_ms[register_threads] / n.get_ms[register_huge];
            }),
        !huge_used ? "the kernel gave no huge pages (transparent huge pages: " + thp + ")" : small);
    ctx.claim(tutorial::at_least("uploads_alike",
                                 "the upload runs at about the same speed whichever way the "
                                 "memory was pinned, at least 0.6 times cudaMallocHost's "
                                 "(slowest / cudaMallocHost)",
                                 slowest_upload(m), 0.6, "x",
                                 "one way's pages are slower for the copy engines (scattered, or "
                                 "not all pinned)")
                  .again([&] { return slowest_upload(again()); }),
              tutorial::why_too_small(bytes, 16 << 20,
                                      "a copy of a few MiB is mostly its fixed cost, and one "
                                      "slow copy decides"));
    return ctx.verdict(seen.pinned && seen.wrong == 0,
                       format("cudaPointerGetAttributes saw pinned host memory every time, and the "
                              "marked ends of every upload arrived: %zu values wrong",
                              seen.wrong));
}

TUTORIAL_SECTION(pinning_at_scale, run_pinning_at_scale);
