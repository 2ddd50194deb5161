// Checks of section pinning_at_scale: gets and gives back pinned memory each way of
// ../pinning_at_scale.cpp in turns, uploads it, checks the marked ends, and judges the costs.
#include "02_pinned/pinning_at_scale.cpp"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <fstream>
#include <string>

using tutorial::format;

namespace {

constexpr int copies = 3;

// Bytes of this process's memory backed by transparent huge pages (/proc/self/smaps_rollup).
std::size_t huge_bytes() {
    std::ifstream rollup("/proc/self/smaps_rollup");
    std::string key;
    std::size_t kib = 0;
    while (rollup >> key) {
        if (key == "AnonHugePages:" && rollup >> kib) return kib * 1024;
        rollup.ignore(1 << 10, '\n');
    }
    return 0;
}

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

struct Pinning {
    double get_ms = 0, give_ms = 0, gbps = 0;
    std::size_t huge = 0;   // bytes backed by huge pages, for register_huge
    bool pinned = true;     // cudaPointerGetAttributes said host memory every time
    std::size_t wrong = 0;  // values of the marked head and tail that did not arrive
};

constexpr std::size_t marked = 1 << 18;  // values marked at each end of the buffer
constexpr std::uint32_t head_seed = 31, tail_seed = 32;

// Marks both ends of the pinned buffer with known values, and checks them after the upload.
void mark(char* host, std::size_t bytes) {
    auto* values = reinterpret_cast<std::uint32_t*>(host);
    fill_on_host(values, marked, head_seed);
    fill_on_host(values + bytes / 4 - marked, marked, tail_seed);
}
std::size_t check_marks(const void* device, std::size_t bytes) {
    const auto* values = static_cast<const std::uint32_t*>(device);
    return mismatches_on_device(values, marked, head_seed) +
           mismatches_on_device(values + bytes / 4 - marked, marked, tail_seed);
}

// Gets pinned memory the given way (timed), copies it to the device (events, median of
// `copies`), gives it back (timed): one round.
Pinning pin_one_way(Way way, std::size_t bytes, int threads, void* device) {
    Pinning p;
    const std::size_t before = huge_bytes();
    tutorial::HostTimer timer;
    char* host = get_pinned(way, bytes, threads);
    p.get_ms = timer.elapsed_ms();
    if (way != malloc_host) p.huge = huge_bytes() - std::min(before, huge_bytes());
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, host));
    p.pinned = attributes.type == cudaMemoryTypeHost;
    mark(host, bytes);
    const double ms = tutorial::median_event_ms(1, copies, [&] {
        CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, nullptr));
    });
    p.gbps = tutorial::gb_per_s(bytes, ms);
    p.wrong = check_marks(device, bytes);
    timer.restart();
    give_back(way, host, bytes);
    p.give_ms = timer.elapsed_ms();
    return p;
}

// Interleaved rounds, every way once per round: a slow moment of the shared host falls on all
// four ways alike instead of on the one being timed then. Medians of the rounds.
void pin_every_way(std::size_t bytes, int threads, void* device, int runs, Pinning (&p)[ways]) {
    std::vector<double> get[ways], give[ways], gbps[ways];
    for (int r = 0; r < runs; ++r) {
        for (int w = 0; w < ways; ++w) {
            const Pinning one = pin_one_way(static_cast<Way>(w), bytes, threads, device);
            get[w].push_back(one.get_ms);
            give[w].push_back(one.give_ms);
            gbps[w].push_back(one.gbps);
            p[w].huge = one.huge;
            p[w].pinned = p[w].pinned && one.pinned;
            p[w].wrong += one.wrong;
        }
    }
    for (int w = 0; w < ways; ++w) {
        p[w].get_ms = tutorial::median(get[w]);
        p[w].give_ms = tutorial::median(give[w]);
        p[w].gbps = tutorial::median(gbps[w]);
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
        "Pinning %s four ways, in %d rounds that take each way in turn, timed on the host\n"
        "(medians): getting it (allocate, touch, pin) and giving it back; in between, an upload\n"
        "of all of it (events, median of\n"
        "%d). Touching means one write per 4 KiB page. %d threads where it says T; transparent\n"
        "huge pages here: %s.\n\n",
        tutorial::format_bytes(bytes).c_str(), runs, copies, threads, thp.c_str());
    void* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    Pinning p[ways];
    pin_every_way(bytes, threads, device, runs, p);
    CUDA_CHECK(cudaFree(device));
    const double gib = static_cast<double>(bytes) / (1ull << 30);
    const char* names[ways] = {"cudaMallocHost / cudaFreeHost",
                               "mmap, touch on 1 thread, cudaHostRegister",
                               "mmap, touch on T threads, cudaHostRegister",
                               "mmap, MADV_HUGEPAGE, touch on T, cudaHostRegister"};
    tutorial::Table table({{"how"},
                           {"get ms/GiB", tutorial::Align::right},
                           {"give back ms/GiB", tutorial::Align::right},
                           {"upload GB/s", tutorial::Align::right},
                           {"on huge pages", tutorial::Align::right}});
    for (int w = 0; w < ways; ++w) {
        table.add_row({names[w], format("%.1f", p[w].get_ms / gib),
                       format("%.1f", p[w].give_ms / gib), format("%.1f", p[w].gbps),
                       w == register_huge ? tutorial::format_bytes(p[w].huge) : ""});
    }
    table.print();
    std::printf(
        "\nPCIe Gen5 x16 carries about 55 GB/s in practice: the upload is bounded by the "
        "link,\nnot by how the memory was pinned.\n\n");
    const double slowest_copy = std::min({p[0].gbps, p[1].gbps, p[2].gbps, p[3].gbps});
    ctx.claim(
        tutorial::at_least(
            "touching the pages on T threads, then cudaHostRegister, pins faster than "
            "cudaMallocHost (cudaMallocHost / T threads)",
            p[malloc_host].get_ms / p[register_threads].get_ms, 1.5, "x",
            "page faults do not scale over threads on this kernel, or cudaMallocHost is fast here"),
        threads >= 4 ? "" : format("%d CPU threads here; touching in parallel needs 4", threads));
    const bool huge_used = p[register_huge].huge >= bytes / 2;
    ctx.claim(
        tutorial::at_least("huge pages make it cheaper still (T threads, 4 KiB pages / huge pages)",
                           p[register_threads].get_ms / p[register_huge].get_ms, 1.3, "x",
                           "pinning costs per byte, not per page, here"),
        huge_used ? "" : "the kernel gave no huge pages (transparent huge pages: " + thp + ")");
    ctx.claim(tutorial::at_least(
        "the upload runs at about the same speed whichever way the memory was pinned, at least "
        "0.6 times cudaMallocHost's (slowest / cudaMallocHost)",
        slowest_copy / p[malloc_host].gbps, 0.6, "x",
        "one way's pages are slower for the copy engines (scattered, or not all pinned)"));
    bool all_pinned = true;
    std::size_t wrong = 0;
    for (const Pinning& one : p) {
        all_pinned = all_pinned && one.pinned;
        wrong += one.wrong;
    }
    return ctx.verdict(all_pinned && wrong == 0,
                       format("cudaPointerGetAttributes saw pinned host memory every time, and the "
                              "marked ends of every upload arrived: %zu values wrong",
                              wrong));
}

TUTORIAL_SECTION(pinning_at_scale, run_pinning_at_scale);
