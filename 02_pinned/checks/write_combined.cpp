// Checks of section write_combined: runs the walkthrough of ../write_combined.cpp round after
// round, times its steps (the CPU's writes and reads by the host's clock, the uploads by events),
// and judges how slowly the CPU reads write-combined memory.
#include "02_pinned/write_combined.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

using tutorial::format;

namespace {

// Medians over rounds of the walkthrough, GB/s: [kind] the CPU writing, reading, uploading.
struct Speeds {
    double write_gbps[3], read_gbps[3], copy_gbps[3];
};

Speeds time_rounds(std::size_t bytes, int runs, int& wrong) {
    tutorial::StepTimes times;
    for (int r = 0; r < runs; ++r) wrong += 3 - walkthrough(bytes);
    Speeds s{};
    for (int k = 0; k < 3; ++k) {
        s.write_gbps[k] = tutorial::gb_per_s(bytes, times.median_host_ms(kinds[k].write));
        s.read_gbps[k] = tutorial::gb_per_s(bytes, times.median_host_ms(kinds[k].read));
        s.copy_gbps[k] = tutorial::gb_per_s(bytes, times.median_ms(kinds[k].upload));
    }
    return s;
}

std::string why_not_judged(std::size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
    if (tutorial::running_in_virtual_machine())
        return "this runs in a virtual machine, whose hypervisor may map guest memory as "
               "ordinary cached memory whatever the guest asks for";
    return tutorial::why_too_small(bytes, 1 << 20,
                                   "a read this short is not timed well by the host's clock");
#else
    (void)bytes;
    return "write-combining as measured here is an x86 memory type; other CPUs map this memory "
           "in their own way";
#endif
}

}  // namespace

tutorial::Result run_write_combined(tutorial::Context& ctx) {
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (4 << 20) : (64 << 20));
    const int runs = ctx.iters_or(ctx.quick() ? 3 : 5);
    std::printf(
        "The walkthrough, %d times after a warm-up: one CPU thread writes %s into each kind of\n"
        "buffer, then reads it all back (a sum), then the buffer is copied to the device. Host\n"
        "clock for the CPU's work, events for the copy; medians of the rounds.\n\n",
        runs, tutorial::format_bytes(bytes).c_str());
    int wrong = 3 - walkthrough(bytes);  // the warm-up
    const Speeds s = time_rounds(bytes, runs, wrong);
    tutorial::Table table({{"host memory"},
                           {"CPU write GB/s", tutorial::Align::right},
                           {"CPU read GB/s", tutorial::Align::right},
                           {"host -> device GB/s", tutorial::Align::right}});
    for (int k = 0; k < 3; ++k) {
        table.add_row({kinds[k].name, format("%.2f", s.write_gbps[k]),
                       format("%.2f", s.read_gbps[k]), format("%.1f", s.copy_gbps[k])});
    }
    table.print();

    const double wc_read_share = s.read_gbps[0] / s.read_gbps[1];
    std::printf(
        "\nReading write-combined memory ran at %.0f%% of the speed of reading ordinary pinned\n"
        "memory. Write-combined pages are not cached: the CPU gathers writes into a small\n"
        "buffer and sends them out in bursts, which is why writing and uploading stay fast, but\n"
        "every read has to go all the way to DRAM and waits for it.\n\n",
        100.0 * wc_read_share);
    ctx.claim(tutorial::at_most("wc_reads_slow",
                                "the CPU reads write-combined memory much slower than ordinary "
                                "pinned memory (WC / pinned read speed)",
                                100.0 * wc_read_share, 50.0, "%",
                                "the CPU caches this memory: the page attributes the driver "
                                "asked for were not applied")
                  .again([&] {
                      const Speeds n = time_rounds(bytes, runs, wrong);
                      return 100.0 * n.read_gbps[0] / n.read_gbps[1];
                  }),
              why_not_judged(bytes));
    if (wc_read_share > 0.5) {
        std::printf(
            "Here the reads were not slow, so this CPU is not treating the memory as\n"
            "write-combined%s.\n",
            tutorial::running_in_virtual_machine()
                ? ": it runs in a virtual machine (the \"hypervisor\" CPU flag is set), and a\n"
                  "hypervisor may map guest memory as ordinary cached memory whatever the guest's\n"
                  "page tables ask for"
                : "");
    }
    return ctx.verdict(wrong == 0, format("every round's buffers (3 kinds): the CPU's sum matched "
                                          "the pattern's and the device received exactly the "
                                          "data; %d wrong",
                                          wrong));
}

TUTORIAL_SECTION(write_combined, run_write_combined);
