// Checks of section thrash: runs ../thrash.cu's rounds on fresh buffers for three cases, counts
// the first 20 of the two where the CPU writes with the driver's Unified Memory counters, then
// times every case, and judges what moved and what it cost.
#include "03_managed/thrash.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/um_counters.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

struct Case {
    const char* name;
    bool cpu_writes;
    std::size_t gpu_index;  // where the GPU writes, relative to the CPU's element 0
};

constexpr int first = 20;  // the rounds timed (and counted) apart from the rest

// The Unified Memory counters over the first 20 rounds on a fresh buffer, before the timed runs
// (counting makes every round wait for the counters, so no round counted is timed): rounds 1 to
// 5 one by one, rounds 6 to 20 together.
constexpr int one_by_one = 5;

struct CountedRounds {
    tutorial::UmTraffic round[one_by_one];
    tutorial::UmTraffic later;  // rounds 6 to 20
};

CountedRounds count_rounds(tutorial::UmCounters& counters, const Case& c) {
    int* data = shared_buffer();
    CountedRounds counted;
    for (int r = 0; r < one_by_one; ++r) {
        counted.round[r] = counters.measure([&] { one_round(data, c.gpu_index, c.cpu_writes, r); });
    }
    counted.later = counters.measure([&] {
        for (int r = one_by_one; r < first; ++r) one_round(data, c.gpu_index, c.cpu_writes, r);
    });
    CUDA_CHECK(cudaFree(data));
    return counted;
}

double kib(std::uint64_t bytes) {
    return static_cast<double>(bytes) / 1024.0;
}

// One page is 4 KiB, which um_cells' MiB would print as 0.0: this table gives both directions in
// KiB instead.
std::vector<tutorial::Column> kib_columns() {
    std::vector<tutorial::Column> columns = tutorial::um_columns("pages, rounds");
    columns[1].header = "HtoD KiB";
    columns[2].header = "DtoH KiB";
    return columns;
}

std::vector<std::string> kib_cells(const std::string& name, const tutorial::UmTraffic& t) {
    std::vector<std::string> cells = tutorial::um_cells(name, t);
    if (t.counted) {
        cells[1] = tutorial::format("%.0f", kib(t.htod.total));
        cells[2] = tutorial::format("%.0f", kib(t.dtoh.total));
    }
    return cells;
}

// What the counted rounds show, for the claims and the narration.
struct RoundFacts {
    double fewest_kib_one_way = 0.0;  // same page, rounds 2 to 5: the smaller direction, least
    double fewest_faults = 0.0;       // same page, rounds 2 to 5: the fewer of CPU and GPU faults
    double separate_kib = 0.0;        // separate pages, rounds 3 to 20: both directions
    std::uint64_t remedies[3] = {0, 0, 0};  // same page, rounds 6 to 20: thrashing, throttling,
                                            // remote maps
    std::string lost;  // um_records_lost of the first counted step that shows a loss, or ""
};

RoundFacts facts_of(const CountedRounds& separate, const CountedRounds& same) {
    RoundFacts f;
    f.fewest_kib_one_way = 1e30;
    f.fewest_faults = 1e30;
    for (int r = 1; r < one_by_one; ++r) {
        const tutorial::UmTraffic& t = same.round[r];
        f.fewest_kib_one_way =
            std::min(f.fewest_kib_one_way, kib(std::min(t.htod.total, t.dtoh.total)));
        f.fewest_faults = std::min(
            f.fewest_faults, static_cast<double>(std::min(t.gpu_page_faults, t.cpu_page_faults)));
    }
    for (int r = 2; r < one_by_one; ++r) {
        f.separate_kib += kib(separate.round[r].htod.total + separate.round[r].dtoh.total);
    }
    f.separate_kib += kib(separate.later.htod.total + separate.later.dtoh.total);
    f.remedies[0] = same.later.thrashing;
    f.remedies[1] = same.later.throttling;
    f.remedies[2] = same.later.remote_maps;
    for (const CountedRounds* c : {&separate, &same}) {
        for (const tutorial::UmTraffic& t : c->round) {
            if (f.lost.empty()) f.lost = tutorial::um_records_lost(t);
        }
        if (f.lost.empty()) f.lost = tutorial::um_records_lost(c->later);
    }
    return f;
}

// Counts the first 20 rounds of the two cases where the CPU writes, prints them as a table, and
// judges what moved.
RoundFacts count_and_judge(tutorial::Context& ctx, const Case& separate_case,
                           const Case& same_case) {
    tutorial::UmCounters counters;
    const CountedRounds separate = count_rounds(counters, separate_case);
    const CountedRounds same = count_rounds(counters, same_case);
    std::printf(
        "What moved in the first %d rounds, counted by the driver (Unified Memory\n"
        "counters, CUPTI) on fresh buffers, before the timed runs:\n\n",
        first);
    tutorial::Table table(kib_columns());
    const struct {
        const char* name;
        const CountedRounds& counted;
    } rows[] = {{"separate", separate}, {"same", same}};
    for (const auto& row : rows) {
        for (int r = 0; r < one_by_one; ++r) {
            table.add_row(
                kib_cells(tutorial::format("%s, round %d", row.name, r + 1), row.counted.round[r]));
        }
        table.add_row(
            kib_cells(tutorial::format("%s, rounds %d-%d", row.name, one_by_one + 1, first),
                      row.counted.later));
    }
    table.print();
    const RoundFacts f = facts_of(separate, same);
    std::string why =
        tutorial::why_not_counted(counters, {}, tutorial::why_pages_need_not_migrate(ctx.device));
    if (why.empty()) why = f.lost;  // its steps were counted in loops: their losses, collected
    std::printf("\n");
    ctx.claim(tutorial::counted_at_least(
                  "CPU and GPU writing the same page in turns move it both ways in each of rounds "
                  "2 to 5: the fewest KiB one way in one round",
                  f.fewest_kib_one_way, 4.0, " KiB",
                  "the page stayed where it was: the driver mapped it for the other side instead "
                  "of moving it (the thrash/throttle/remote column), or the two elements are on "
                  "different pages"),
              why);
    ctx.claim(tutorial::counted_at_least(
                  "CPU and GPU writing the same page in turns both fault in each of rounds 2 to "
                  "5: the fewer of CPU and GPU page faults in one round",
                  f.fewest_faults, 1.0, " faults",
                  "one side reached the page without faulting: it was mapped for that side "
                  "where it was, or one side does not write it"),
              why);
    ctx.claim(tutorial::counted_at_most(
                  "CPU and GPU writing separate pages settle: KiB moved either way in rounds 3 to "
                  "20",
                  f.separate_kib, 16.0, " KiB",
                  "pages moved after each side had its own: the two elements share a page"),
              why);
    return f;
}

// The driver's thrashing remedies for the shared page, where it reported any.
void print_remedies(const RoundFacts& f) {
    if (f.remedies[0] + f.remedies[1] + f.remedies[2] == 0) return;
    std::printf(
        "In rounds 6-20 of the shared page the driver reported %llu thrashing, %llu throttling\n"
        "and %llu remote-map events: it noticed the ping-pong, slowed the side that kept\n"
        "faulting, and may leave the page in one place for the other side to reach there.\n",
        static_cast<unsigned long long>(f.remedies[0]),
        static_cast<unsigned long long>(f.remedies[1]),
        static_cast<unsigned long long>(f.remedies[2]));
}

// The first 20 rounds on a fresh buffer of each case, timed again: same-page us per round over
// separate-pages us per round (fresh rounds for a timing claim that fell short).
double first_rounds_ratio(const Case& separate, const Case& same) {
    const auto first_us = [](const Case& c) {
        int* data = shared_buffer();
        tutorial::HostTimer timer;
        for (int r = 0; r < first; ++r) one_round(data, c.gpu_index, c.cpu_writes, r);
        const double us = timer.elapsed_ms() * 1e3 / first;
        CUDA_CHECK(cudaFree(data));
        return us;
    };
    const double separate_us = first_us(separate);
    return first_us(same) / separate_us;
}

}  // namespace

tutorial::Result run_thrash(tutorial::Context& ctx) {
    const int rounds = ctx.iters_or(ctx.quick() ? 100 : 2000);
    std::printf(
        "Rounds of: the CPU writes element 0 of a fresh managed buffer, then a kernel writes\n"
        "one element and the host waits for it (cudaDeviceSynchronize).\n\n");
    const Case cases[] = {
        {"GPU only (no CPU write): launch + sync", false, far_apart},
        {"CPU and GPU on separate pages", true, far_apart},
        {"CPU and GPU on the same page", true, 1},
    };
    const RoundFacts counted = count_and_judge(ctx, cases[1], cases[2]);
    std::printf(
        "\n%d rounds per case, timed (host timer); the first %d are reported apart from\n"
        "the rest.\n\n",
        rounds, first);
    tutorial::Table table({{"case"},
                           {"us per round, first 20", tutorial::Align::right},
                           {"us per round, the rest", tutorial::Align::right},
                           {"final values"}});
    double separate_first = 0.0;
    double same_first = 0.0;
    double same_rest = 0.0;
    int correct = 0;
    for (const Case& c : cases) {
        int* data = shared_buffer();
        const auto round = [&](int r) { one_round(data, c.gpu_index, c.cpu_writes, r); };
        tutorial::HostTimer timer;
        for (int r = 0; r < first; ++r) round(r);
        const double first_us = timer.elapsed_ms() * 1e3 / first;
        timer.restart();
        for (int r = first; r < rounds; ++r) round(r);
        const double rest_us = timer.elapsed_ms() * 1e3 / (rounds - first);
        const int last = rounds - 1;
        const bool ok = data[c.gpu_index] == 2 * last + 1 && data[0] == (c.cpu_writes ? last : -1);
        correct += ok;
        CUDA_CHECK(cudaFree(data));
        if (c.cpu_writes && c.gpu_index == far_apart) separate_first = first_us;
        if (c.gpu_index == 1) {
            same_first = first_us;
            same_rest = rest_us;
        }
        table.add_row({c.name, tutorial::format("%.1f", first_us),
                       tutorial::format("%.1f", rest_us), ok ? "correct" : "WRONG"});
    }
    table.print();
    std::printf(
        "\nIn the first rounds a round on the same page costs %.1f us, %.1fx a round on separate\n"
        "pages (whose first rounds include the pages' first touch): the CPU's write faults the\n"
        "page back from the GPU, and the kernel's write faults it over again.\n",
        same_first, same_first / separate_first);
    print_remedies(counted);
    if (same_rest < 0.7 * same_first) {
        std::printf(
            "Later rounds cost %.1f us. The counted rounds 6-20 above show how much still\n"
            "moved by then, and what the driver did about the ping-pong.\n",
            same_rest);
    }
    std::printf(
        "Memory both sides write in turns is the worst case for managed memory; chapter 05\n"
        "shows how prefetching and memory advice avoid the faults.\n\n");
    ctx.claim(
        tutorial::at_least(
            "in the first rounds, CPU and GPU writing the same page cost more per round than "
            "writing "
            "separate pages",
            same_first / separate_first, 1.5, "x",
            "the page did not migrate on each touch: a system where the CPU reaches GPU memory "
            "directly (directManagedMemAccessFromHost = 1) or where managed memory stays in host "
            "memory")
            .again([&] { return first_rounds_ratio(cases[1], cases[2]); }),
        tutorial::why_pages_need_not_migrate(ctx.device));
    return ctx.verdict(correct == 3, tutorial::format("%d of 3 cases left the values the last "
                                                      "round wrote",
                                                      correct));
}

TUTORIAL_SECTION(thrash, run_thrash);
