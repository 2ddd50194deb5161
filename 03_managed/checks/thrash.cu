// Checks of section thrash: runs ../thrash.cu's walkthrough round after round and times its
// stretches of rounds per case (host time: every round waits for its kernel), then once more for
// 20 rounds with the driver's Unified Memory counters on, and judges what moved and what it cost.
#include "03_managed/thrash.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/harness/um_counters.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;

namespace {

constexpr const char* case_names[3] = {"GPU only (no CPU write): launch + sync",
                                       "CPU and GPU on separate pages",
                                       "CPU and GPU on the same page"};
constexpr int first = 20;  // the rounds timed (and counted) apart from the rest

// Microseconds per round, medians over the walkthroughs: the first 20 rounds of a fresh buffer,
// and the rest.
struct Times {
    double first_us[3];
    double rest_us[3];
};

Times time_rounds(tutorial::StepTimes& times, int rounds, int runs, Found& found) {
    times.clear();
    for (int i = 0; i < runs; ++i) found = walkthrough(rounds);
    Times t{};
    for (int k = 0; k < 3; ++k) {
        const Case& c = cases[k];
        const std::vector<double> one = times.host_ms(c.rounds[0]);
        const std::vector<double> two = times.host_ms(c.rounds[1]);
        const std::vector<double> six = times.host_ms(c.rounds[2]);
        const std::vector<double> rest = times.host_ms(c.rounds[3]);
        std::vector<double> firsts;
        for (std::size_t i = 0; i < one.size(); ++i) firsts.push_back(one[i] + two[i] + six[i]);
        t.first_us[k] = tutorial::median(firsts) * 1e3 / first;
        t.rest_us[k] = tutorial::median(rest) * 1e3 / (rounds - first);
    }
    return t;
}

void print_times(const Times& t, const Found& found, int rounds, int runs) {
    std::printf(
        "\n%d rounds per case, timed (host timer); the first %d apart from the rest; medians of\n"
        "%d walkthroughs:\n\n",
        rounds, first, runs);
    tutorial::Table table({{"case"},
                           {"us per round, first 20", tutorial::Align::right},
                           {"us per round, the rest", tutorial::Align::right},
                           {"final values"}});
    table.named("times");
    for (int k = 0; k < 3; ++k) {
        table.add_row({case_names[k], format("%.1f", t.first_us[k]), format("%.1f", t.rest_us[k]),
                       found.right[k] ? "correct" : "WRONG"});
    }
    table.print();
}

double kib(std::uint64_t bytes) {
    return static_cast<double>(bytes) / 1024.0;
}

// One page is 4 KiB, which um_cells' MiB would print as 0.0: this table gives both directions in
// KiB instead.
std::vector<std::string> kib_cells(const std::string& name, const tutorial::UmTraffic& t) {
    std::vector<std::string> cells = tutorial::um_cells(name, t);
    if (t.counted) {
        cells[1] = format("%.0f", kib(t.htod.total));
        cells[2] = format("%.0f", kib(t.dtoh.total));
    }
    return cells;
}

// The walkthrough once more, 20 rounds, counted: what moved in each stretch of each case.
struct Counted {
    tutorial::UmTraffic steps[3][3];  // case, stretch: round 1, rounds 2-5, rounds 6-20
};

Counted count_rounds(tutorial::UmCounters& counters) {
    Counted c;
    tutorial::StepTraffic traffic(counters);
    walkthrough(first);
    for (int k = 0; k < 3; ++k) {
        for (int s = 0; s < 3; ++s) c.steps[k][s] = traffic.of(cases[k].rounds[s]);
    }
    std::vector<tutorial::Column> columns = tutorial::um_columns("pages, rounds");
    columns[1].header = "HtoD KiB";
    columns[2].header = "DtoH KiB";
    tutorial::Table kib_table(columns);
    kib_table.named("counted");
    for (int k = 1; k < 3; ++k) {
        for (int s = 0; s < 3; ++s)
            kib_table.add_row(kib_cells(cases[k].rounds[s].name, c.steps[k][s]));
    }
    std::printf(
        "\nThe walkthrough again, %d rounds, with the driver's Unified Memory counters (CUPTI)\n"
        "counting what moved in each stretch of rounds:\n%s\n\n",
        first, counters.control_line().c_str());
    kib_table.print();
    return c;
}

// Counted claims on the two cases where the CPU writes.
void claim_counts(tutorial::Context& ctx, const tutorial::UmCounters& counters, const Counted& c,
                  const std::string& paging) {
    const tutorial::UmTraffic& same = c.steps[2][1];  // same page, rounds 2-5
    const tutorial::UmTraffic& separate_early = c.steps[1][1];
    const tutorial::UmTraffic& separate_late = c.steps[1][2];
    const std::string why =
        tutorial::why_not_counted(counters, {&same, &separate_early, &separate_late}, paging);
    std::printf("\n");
    ctx.claim(tutorial::counted_at_least(
                  "same_page_moves_both_ways",
                  "CPU and GPU writing the same page in turns move it both ways in rounds 2 to "
                  "5: the fewer KiB of the two directions (a 4 KiB page each way a round: 16)",
                  kib(std::min(same.htod.total, same.dtoh.total)), 16.0, " KiB",
                  "the page stayed where it was: the driver mapped it for the other side instead "
                  "of moving it (the thrash/throttle/remote column), or the two elements are on "
                  "different pages"),
              why);
    ctx.claim(tutorial::counted_at_least(
                  "same_page_both_fault",
                  "CPU and GPU writing the same page in turns both fault in rounds 2 to 5: the "
                  "fewer of CPU and GPU page faults (one a round: 4)",
                  static_cast<double>(std::min(same.gpu_page_faults, same.cpu_page_faults)), 4.0,
                  " faults",
                  "one side reached the page without faulting: it was mapped for that side "
                  "where it was, or one side does not write it"),
              why);
    ctx.claim(
        tutorial::counted_at_most(
            "separate_pages_settle",
            "CPU and GPU writing separate pages settle: KiB moved either way in rounds 2 to "
            "20",
            kib(separate_early.htod.total + separate_early.dtoh.total + separate_late.htod.total +
                separate_late.dtoh.total),
            16.0, " KiB", "pages moved after each side had its own: the two elements share a page"),
        why);
}

// The driver's thrashing remedies for the shared page, where it reported any.
void print_remedies(const Counted& c) {
    const tutorial::UmTraffic& later = c.steps[2][2];
    if (later.thrashing + later.throttling + later.remote_maps == 0) return;
    std::printf(
        "In rounds 6-20 of the shared page the driver reported %llu thrashing, %llu throttling\n"
        "and %llu remote-map events: it noticed the ping-pong, slowed the side that kept\n"
        "faulting, and may leave the page in one place for the other side to reach there.\n",
        static_cast<unsigned long long>(later.thrashing),
        static_cast<unsigned long long>(later.throttling),
        static_cast<unsigned long long>(later.remote_maps));
}

}  // namespace

tutorial::Result run_thrash(tutorial::Context& ctx) {
    const int rounds = ctx.iters_or(ctx.quick() ? 100 : 2000);
    // Three walkthroughs for the medians; one under compute-sanitizer, where no time is judged.
    const int runs = tutorial::why_timing_not_judged().empty() ? 3 : 1;
    std::printf(
        "The walkthrough: for each case, rounds on a fresh managed buffer in which the CPU\n"
        "writes element 0 and then a kernel writes one element and the host waits for it\n"
        "(cudaDeviceSynchronize).\n");
    Found found;
    Times t{};
    const std::string paging = tutorial::why_pages_need_not_migrate(ctx.device);
    {
        tutorial::StepTimes times;
        t = time_rounds(times, rounds, runs, found);
        print_times(t, found, rounds, runs);
        std::printf(
            "\nIn the first rounds a round on the same page costs %.1f us, %.1fx a round on\n"
            "separate pages (whose first rounds include the pages' first touch): the CPU's write\n"
            "faults the page back from the GPU, and the kernel's write faults it over again.\n"
            "Memory both sides write in turns is the worst case for managed memory; chapter 05\n"
            "shows how prefetching and memory advice avoid the faults.\n\n",
            t.first_us[2], t.first_us[2] / t.first_us[1]);
        ctx.claim(tutorial::at_least("same_page_costs_more",
                                     "in the first rounds, CPU and GPU writing one page cost more "
                                     "per round than writing separate pages",
                                     t.first_us[2] / t.first_us[1], 1.5, "x",
                                     "the page did not migrate on each touch: a system where the "
                                     "CPU reaches GPU memory directly "
                                     "(directManagedMemAccessFromHost = 1) or where managed "
                                     "memory stays in host memory")
                      .again([&] {
                          Found again;
                          const Times n = time_rounds(times, rounds, runs, again);
                          return n.first_us[2] / n.first_us[1];
                      }),
                  paging);
    }
    tutorial::UmCounters counters;
    const Counted c = count_rounds(counters);
    print_remedies(c);
    if (t.rest_us[2] < 0.7 * t.first_us[2]) {
        std::printf(
            "Later rounds on the same page cost %.1f us: the counted rounds 6-20 above show how\n"
            "much still moved by then, and what the driver did about the ping-pong.\n",
            t.rest_us[2]);
    }
    claim_counts(ctx, counters, c, paging);
    const int correct = found.right[0] + found.right[1] + found.right[2];
    return ctx.verdict(correct == 3,
                       format("%d of 3 cases left the values the last round wrote", correct));
}

TUTORIAL_SECTION(thrash, run_thrash);
