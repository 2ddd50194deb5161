// Section `write_combined`: how fast the CPU writes and reads write-combined pinned memory,
// ordinary pinned memory and pageable memory, and how fast each one uploads to the device.
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"
#include "common/harness/chapter.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using tutorial::format;

namespace {

struct HostBuffers {
    void* write_combined;
    void* pinned;
    void* pageable;
};

// lesson:begin
// Three kinds of host memory. Write-combined memory bypasses the CPU's caches: writes are
// gathered and sent out in bursts, reads go all the way to memory every time.
HostBuffers allocate_host_buffers(std::size_t bytes) {
    HostBuffers b{nullptr, nullptr, std::malloc(bytes)};
    CUDA_CHECK(cudaHostAlloc(&b.write_combined, bytes, cudaHostAllocWriteCombined));
    CUDA_CHECK(cudaMallocHost(&b.pinned, bytes));
    return b;
}

void free_host_buffers(const HostBuffers& b) {
    std::free(b.pageable);
    CUDA_CHECK(cudaFreeHost(b.pinned));
    CUDA_CHECK(cudaFreeHost(b.write_combined));
}

// What each is for: the CPU writes it, then the copy engine uploads it.
void upload(std::uint32_t* device, const void* host, std::size_t bytes) {
    CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

struct Speeds {
    double write_gbps;  // the CPU writing the buffer
    double read_gbps;   // the CPU reading it back
    double copy_gbps;   // cudaMemcpy of the buffer to the device
    bool ok;            // the CPU's sum and the device's copy were both right
};

Speeds measure(std::uint32_t* data, std::uint32_t* device, std::size_t count, int runs,
               std::uint32_t seed) {
    const std::size_t bytes = count * sizeof *data;
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
    const double copy_ms = tutorial::median_event_ms(
        1, runs, [&] { upload(device, data, bytes); });
    const bool ok =
        sum == pattern_sum(count, seed) && mismatches_on_device(device, count, seed) == 0;
    return {tutorial::gb_per_s(bytes, write_ms), tutorial::gb_per_s(bytes, read_ms),
            tutorial::gb_per_s(bytes, copy_ms), ok};
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

    const HostBuffers host = allocate_host_buffers(bytes);
    std::uint32_t* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    struct Kind {
        const char* name;
        void* host;
    };
    const Kind kinds[] = {
        {"write-combined", host.write_combined}, {"pinned", host.pinned}, {"pageable", host.pageable}};
    tutorial::Table table({{"host memory"},
                           {"CPU write GB/s", tutorial::Align::right},
                           {"CPU read GB/s", tutorial::Align::right},
                           {"host -> device GB/s", tutorial::Align::right}});
    int good = 0;
    Speeds speeds[3] = {};
    for (int k = 0; k < 3; ++k) {
        speeds[k] = measure(static_cast<std::uint32_t*>(kinds[k].host), device, count, runs, 7 + k);
        good += speeds[k].ok ? 1 : 0;
        table.add_row({kinds[k].name, format("%.2f", speeds[k].write_gbps),
                       speeds[k].ok ? format("%.2f", speeds[k].read_gbps) : "wrong data",
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
