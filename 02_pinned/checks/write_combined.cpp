// Checks of section write_combined: measures the three buffers of ../write_combined.cpp, checks
// the CPU's sum and the device's copy, and judges how slowly the CPU reads write-combined memory.
#include "02_pinned/write_combined.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <cstdio>

using tutorial::format;

tutorial::Result run_write_combined(tutorial::Context& ctx) {
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (4 << 20) : (64 << 20));
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const int runs = ctx.iters_or(ctx.quick() ? 3 : 5);
    std::printf(
        "One CPU thread writes %s into each kind of buffer, then reads it all back (a sum),\n"
        "then the buffer is copied to the device. Host timer for the CPU work, events for the\n"
        "copy; 1 warm-up and the median of %d runs each.\n\n",
        tutorial::format_bytes(bytes).c_str(), runs);

    const HostBuffers host = allocate_host_buffers(bytes);
    std::uint32_t* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    struct Kind {
        const char* name;
        void* host;
    };
    const Kind kinds[] = {{"write-combined", host.write_combined},
                          {"pinned", host.pinned},
                          {"pageable", host.pageable}};
    tutorial::Table table({{"host memory"},
                           {"CPU write GB/s", tutorial::Align::right},
                           {"CPU read GB/s", tutorial::Align::right},
                           {"host -> device GB/s", tutorial::Align::right}});
    int good = 0;
    Speeds speeds[3] = {};
    for (int k = 0; k < 3; ++k) {
        const std::uint32_t seed = 7 + k;
        speeds[k] = measure(static_cast<std::uint32_t*>(kinds[k].host), device, count, runs, seed);
        const bool ok = speeds[k].sum == pattern_sum(count, seed) &&
                        mismatches_on_device(device, count, seed) == 0;
        good += ok ? 1 : 0;
        table.add_row({kinds[k].name, format("%.2f", speeds[k].write_gbps),
                       ok ? format("%.2f", speeds[k].read_gbps) : "wrong data",
                       format("%.1f", speeds[k].copy_gbps)});
    }
    table.print();
    CUDA_CHECK(cudaFree(device));
    free_host_buffers(host);

    const double wc_read_share = speeds[0].read_gbps / speeds[1].read_gbps;
    std::printf(
        "\nReading write-combined memory ran at %.0f%% of the speed of reading ordinary pinned\n"
        "memory. Write-combined pages are not cached: the CPU gathers writes into a small\n"
        "buffer and sends them out in bursts, which is why writing and uploading stay fast, but\n"
        "every read has to go all the way to DRAM and waits for it.\n",
        100.0 * wc_read_share);
    std::printf("\n");
#if defined(__x86_64__) || defined(__i386__)
    constexpr bool x86_host = true;
#else
    constexpr bool x86_host = false;
#endif
    ctx.claim(tutorial::at_most("the CPU reads write-combined memory much slower than ordinary "
                                "pinned memory (WC read speed / pinned read speed)",
                                100.0 * wc_read_share, 50.0, "%",
                                "the CPU caches this memory: the page attributes the driver "
                                "asked for were not applied"),
              !x86_host ? "write-combining as measured here is an x86 memory type; other CPUs "
                          "map this memory in their own way"
              : tutorial::running_in_virtual_machine()
                  ? "this runs in a virtual machine, whose hypervisor may map guest memory as "
                    "ordinary cached memory whatever the guest asks for"
                  : "");
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
    return ctx.verdict(good == 3, format("%d of 3 buffers: the CPU's sum matched the pattern's "
                                         "and the device received exactly the data",
                                         good));
}

TUTORIAL_SECTION(write_combined, run_write_combined);
