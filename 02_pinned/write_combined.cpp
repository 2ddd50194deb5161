// Section `write_combined`: how fast the CPU writes and reads write-combined pinned memory,
// ordinary pinned memory and pageable memory, and how fast each one uploads to the device.
#include "common/buffer.hpp"
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/report.hpp"
#include "common/timing.hpp"
#include "copy_timing.hpp"
#include "sections.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

using tutorial::Buffer;
using tutorial::format;
using tutorial::MemoryKind;

namespace {

// Linux lists a "hypervisor" CPU flag inside a virtual machine.
bool running_in_virtual_machine() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("flags", 0) == 0) return line.find(" hypervisor") != std::string::npos;
    }
    return false;
}

}  // namespace

tutorial::Result run_write_combined(tutorial::Context& ctx) {
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (4 << 20) : (64 << 20));
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const int runs = ctx.iters_or(ctx.quick() ? 3 : 5);
    std::printf(
        "One CPU thread writes %s into each kind of buffer, then reads it all back (a sum),\n"
        "then the buffer is copied to the device. Host timer for the CPU work, events for the\n"
        "copy; 1 warm-up and the median of %d runs each.\n\n",
        tutorial::format_bytes(bytes).c_str(), runs);

    const Buffer device(MemoryKind::device, bytes);
    const MemoryKind kinds[] = {MemoryKind::write_combined, MemoryKind::pinned,
                                MemoryKind::pageable};
    tutorial::Table table({{"host memory"},
                           {"CPU write GB/s", tutorial::Align::right},
                           {"CPU read GB/s", tutorial::Align::right},
                           {"host -> device GB/s", tutorial::Align::right}});
    int good = 0;
    double read_gbps[3] = {};
    std::uint32_t seed = 7;
    for (int k = 0; k < 3; ++k) {
        const Buffer host(kinds[k], bytes);
        std::uint32_t* data = host.as<std::uint32_t>();
        const double write_ms = tutorial::median_ms(1, runs, [&] {
            tutorial::HostTimer timer;
            fill_on_host(data, count, seed);
            return timer.elapsed_ms();
        });
        std::uint64_t sum = 0;
        const double read_ms = tutorial::median_ms(1, runs, [&] {
            tutorial::HostTimer timer;
            sum = sum_on_host(data, count);  // the CPU reads every element
            return timer.elapsed_ms();
        });
        const double copy_ms = time_copy_ms(device.get(), data, bytes, 1, 1, runs);
        const bool sum_ok = sum == pattern_sum(count, seed);
        const bool copy_ok = mismatches_on_device(device.as<std::uint32_t>(), count, seed) == 0;
        good += sum_ok && copy_ok ? 1 : 0;
        read_gbps[k] = tutorial::gb_per_s(bytes, read_ms);
        table.add_row(
            {tutorial::kind_name(kinds[k]), format("%.2f", tutorial::gb_per_s(bytes, write_ms)),
             sum_ok ? format("%.2f", read_gbps[k]) : "wrong sum",
             copy_ok ? format("%.1f", tutorial::gb_per_s(bytes, copy_ms)) : "wrong data"});
        ++seed;
    }
    table.print();

    const double wc_read_share = read_gbps[0] / read_gbps[1];
    std::printf(
        "\nReading write-combined memory ran at %.0f%% of the speed of reading ordinary pinned\n"
        "memory. Write-combined pages are not cached: the CPU gathers writes into a small\n"
        "buffer and sends them out in bursts, which is why writing and uploading stay fast, but\n"
        "every read has to go all the way to DRAM and waits for it.\n",
        100.0 * wc_read_share);
    if (wc_read_share > 0.5) {
        std::printf(
            "Here the reads were not slow, so this CPU is not treating the memory as\n"
            "write-combined%s.\n",
            running_in_virtual_machine()
                ? ": it runs in a virtual machine (the \"hypervisor\" CPU flag is set), and a\n"
                  "hypervisor may map guest memory as ordinary cached memory whatever the guest's\n"
                  "page tables ask for"
                : "");
    }
    return ctx.verdict(good == 3, format("%d of 3 buffers: the CPU's sum matched the pattern's "
                                         "and the device received exactly the data",
                                         good));
}
