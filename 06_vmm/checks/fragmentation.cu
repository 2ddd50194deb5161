// Checks of section fragmentation: runs ../fragmentation.cu's walkthrough within a budget taken
// from free memory, times its two replays, prints both allocators' books after each layer and at
// the large request, with the device memory the driver counted, checks the model's arithmetic
// for the verdict and judges the claims about what CUDA and the driver did.
#include "06_vmm/fragmentation.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/vmm.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

using tutorial::Align;
using tutorial::format;
using tutorial::format_bytes;
using tutorial::MiB;

namespace {

// Below this budget the segments' 2 MiB rounding is a large part of each block, and the
// pattern no longer leaves the caching allocator's free memory in pieces.
constexpr std::size_t least_budget = 192 * MiB;

// How far the driver's count of device memory taken may stray from the segment's mapped bytes,
// in chunks. The driver's page tables for the range and a module it loads meanwhile take device
// memory too, and no entry says how much; a few KiB of page tables per GiB mapped in 2 MiB pages
// is what they need, a module of the course's kernels far less than a chunk. A chunk unmapped
// but not released strays by a whole workspace (at least 5% of the budget) and adds up, layer
// after layer.
constexpr double driver_slack_chunks = 4.0;

double as_mib(std::size_t bytes) {
    return static_cast<double>(bytes) / MiB;
}

// What the model's arithmetic gives and what the device did, from one walkthrough.
struct Measured {
    double free_per_request;     // the caching allocator's free blocks / the request, if refused
    double largest_per_request;  // its largest free block / the request
    double peak_ratio;           // the segment's peak bytes in use / the caching allocator's
    std::size_t peak_caching, peak_segment;
    std::size_t books_excess;    // the segment's books: most bytes mapped beyond the bytes in use
    double driver_gap_mib;       // most |device memory taken - bytes mapped|, cudaMemGetInfo's
    std::size_t spanning;        // blocks in use at the end across two or more chunks
    std::size_t most_chunks;     // ...the most chunks one of them spans
    std::size_t spanning_wrong;  // ...their values read wrong
};

std::size_t peak_in_use(const Replay& replay) {
    std::size_t peak = 0;
    for (const Books& books : replay.after) peak = std::max(peak, books.used);
    return peak;
}

// The segment's blocks in use at the end that lie across chunk boundaries. cuMemMap takes only
// addresses that are multiples of the chunk, so the boundaries are the multiples of it.
void count_spanning(const Replay& segment, std::size_t chunk, Measured& m) {
    for (const Kept& block : segment.kept) {
        const std::size_t chunks =
            (block.address + block.bytes - 1) / chunk - block.address / chunk + 1;
        if (chunks < 2) continue;
        ++m.spanning;
        m.most_chunks = std::max(m.most_chunks, chunks);
        m.spanning_wrong += block.wrong;
    }
}

Measured measure(const Found& f) {
    Measured m{};
    const auto request = static_cast<double>(f.request);
    const Books& c = f.caching.after.back();  // after the request: what it refused with
    m.free_per_request = f.caching.served ? 0.0 : static_cast<double>(c.held - c.used) / request;
    m.largest_per_request = static_cast<double>(c.largest_free) / request;
    m.peak_caching = peak_in_use(f.caching);
    m.peak_segment = peak_in_use(f.segment);
    m.peak_ratio = m.peak_caching == 0
                       ? 0.0
                       : static_cast<double>(m.peak_segment) / static_cast<double>(m.peak_caching);
    std::size_t gap = 0;
    for (std::size_t i = 0; i < f.segment.after.size(); ++i) {
        const Books& s = f.segment.after[i];
        const std::size_t taken = f.segment.taken[i];
        m.books_excess = std::max(m.books_excess, s.held > s.used ? s.held - s.used : 0);
        gap = std::max(gap, taken > s.held ? taken - s.held : s.held - taken);
    }
    m.driver_gap_mib = as_mib(gap);
    count_spanning(f.segment, f.chunk, m);
    return m;
}

// Both allocators' books after each layer (its workspace freed) and after the large request.
void print_books(const Found& f) {
    tutorial::Table table({{"after"},
                           {"caching: in use", Align::right},
                           {"cudaMalloc'd", Align::right},
                           {"largest free block", Align::right},
                           {"segment: in use", Align::right},
                           {"mapped", Align::right},
                           {"taken (cudaMemGetInfo)", Align::right}});
    table.named("books");
    const auto mib = [](std::size_t bytes) { return format("%.1f MiB", as_mib(bytes)); };
    const std::size_t rows = std::min(f.caching.after.size(), f.segment.after.size());
    for (std::size_t i = 0; i < rows; ++i) {
        const bool request = i + 1 == rows;
        if (!request && i % 3 != 2) continue;  // each layer's three events: output, workspace, free
        const Books& c = f.caching.after[i];
        const Books& s = f.segment.after[i];
        table.add_row({request ? "the large request" : format("layer %zu", i / 3 + 1), mib(c.used),
                       mib(c.held), mib(c.largest_free), mib(s.used), mib(s.held),
                       mib(f.segment.taken[i])});
    }
    table.print();
}

void narrate(const Found& f, const Measured& m, std::size_t budget, tutorial::StepTimes& times) {
    const Books& c = f.caching.after.back();
    const std::size_t segment = (f.request + (2 * MiB) - 1) / (2 * MiB) * (2 * MiB);
    std::printf(
        "\nEach layer's output landed in the segment the layer before had cudaMalloc'd for its\n"
        "workspace (the smallest free block that fits), and the next, larger workspace needed a\n"
        "segment of its own: every segment keeps one output and a free remainder.\n");
    if (!f.caching.served)
        std::printf(
            "Asked for %s, the caching allocator gave its segments with nothing in use back and\n"
            "refused: it held %s, %s of it in use, so %s lay free in its blocks (%.2f times the\n"
            "request), but the largest was %s, and a new segment would have passed the budget\n"
            "by %s. Free memory in two segments cannot be joined: each is one cudaMalloc.\n",
            format_bytes(f.request).c_str(), format_bytes(c.held).c_str(),
            format_bytes(c.used).c_str(), format_bytes(c.held - c.used).c_str(), m.free_per_request,
            format_bytes(c.largest_free).c_str(),
            format_bytes(c.held + segment - std::min(budget, c.held + segment)).c_str());
    std::printf(
        "The expandable segment %s it: its blocks lie one after another from the start of its\n"
        "range, each workspace freed at the end took its chunks back with it, and the request\n"
        "mapped new chunks right behind the last output. Peak use of the budget: %s (%.0f%%)\n"
        "in the segment, %s (%.0f%%) in the caching allocator.\n",
        f.segment.served ? "served" : "refused", format_bytes(m.peak_segment).c_str(),
        100.0 * as_mib(m.peak_segment) / as_mib(budget), format_bytes(m.peak_caching).c_str(),
        100.0 * as_mib(m.peak_caching) / as_mib(budget));
    std::printf(
        "The replay took %.1f ms on cudaMalloc'd segments and %.1f ms in the segment, which\n"
        "maps and unmaps one %s chunk at a time (host time, with a kernel filling each block\n"
        "as it is handed out).\n\n",
        times.median_host_ms(caching_replay), times.median_host_ms(segment_replay),
        format_bytes(f.chunk).c_str());
}

// The model's arithmetic and the values read back: what the verdict checks. The pattern's sizes
// and the two allocators' rules decide every row but the two of values, the same in every run at
// one budget: they are checks of the model, not measurements of the device.
bool check_model(const Found& f, const Measured& m) {
    tutorial::Table table({{"check"}, {"found", Align::right}, {"expected"}, {"as expected"}});
    table.named("checks");
    bool all = true;
    const auto row = [&](const std::string& what, const std::string& found,
                         const std::string& expected, bool ok) {
        table.add_row({what, found, expected, ok ? "yes" : "NO"});
        all = all && ok;
    };
    const auto served = [](bool yes) { return std::string(yes ? "served" : "refused"); };
    row("the pattern, on both allocators",
        f.caching.pattern_fit && f.segment.pattern_fit ? "all served" : "an allocation refused",
        "all served", f.caching.pattern_fit && f.segment.pattern_fit);
    row("the caching allocator, the request", served(f.caching.served), "refused",
        !f.caching.served);
    row("  its free blocks / the request", format("%.2fx", m.free_per_request), ">= 1.1x",
        m.free_per_request >= 1.1);
    row("  its largest free block / the request", format("%.3fx", m.largest_per_request), "<= 0.8x",
        m.largest_per_request <= 0.8);
    row("the expandable segment, the request", served(f.segment.served), "served",
        f.segment.served);
    row("  its peak in use / the caching allocator's", format("%.2fx", m.peak_ratio), ">= 1.15x",
        m.peak_ratio >= 1.15);
    row("  its books: mapped minus in use, the most", format("%zu KiB", m.books_excess / 1024),
        format("<= %zu KiB (a chunk)", f.chunk / 1024), m.books_excess <= f.chunk);
    row("values read wrong, caching allocator", format("%zu", f.caching.wrong), "0",
        f.caching.wrong == 0);
    row("values read wrong, segment (no pointer moved)", format("%zu", f.segment.wrong), "0",
        f.segment.wrong == 0);
    table.print();
    std::printf(
        "\nThe rows down to the segment's books are the model's arithmetic: the pattern's sizes\n"
        "and the two allocators' rules decide them, the same in every run at this budget, so\n"
        "the verdict checks them as the model's and claims nothing about the device with them.\n"
        "The values, read by a kernel at every address handed out, are the device's answer.\n\n");
    return all;
}

void claim_device(tutorial::Context& ctx, const Measured& m, std::size_t chunk,
                  const std::function<Measured()>& again) {
    // What CUDA promises: chunks mapped into one reserved range make one contiguous range of
    // addresses (the Guide's E.4; each cuMemMap maps its chunk at the address given). The
    // segment's blocks that lie across chunk boundaries are read through that range.
    ctx.claim(tutorial::documented(
                  "chunks_one_range",
                  "each block across chunks mapped one by one into one reserved range reads back "
                  "every value",
                  m.spanning > 0 && m.spanning_wrong == 0,
                  format("%zu blocks across 2 to %zu chunks, %zu values wrong in them", m.spanning,
                         m.most_chunks, m.spanning_wrong),
                  "a chunk behind a block in use was unmapped or mapped elsewhere: does grow() "
                  "map at base + mapped(), and does shrink() unmap only the last chunk?",
                  tutorial::Entry{"Programming Guide, E.4 Reserving a Virtual Address Range", "VA",
                                  "可以"}),
              m.spanning > 0
                  ? ""
                  : "no block in use lay across two chunks (the table of checks above says why)");
    // cudaMemGetInfo counts the whole device: measured, and measured again where another
    // process allocated or freed meanwhile (driver_slack_chunks says why 4 chunks).
    ctx.claim(tutorial::at_most("driver_counts_mapped",
                                "the memory cudaMemGetInfo shows taken stays within 4 chunks of "
                                "the bytes mapped (largest gap)",
                                m.driver_gap_mib, driver_slack_chunks * as_mib(chunk), " MiB",
                                "chunks were unmapped but not released (does shrink() call "
                                "cuMemRelease?), or another process allocated or freed device "
                                "memory meanwhile")
                  .again([&] { return again().driver_gap_mib; }));
}

}  // namespace

tutorial::Result run_fragmentation(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device))
        return ctx.skip("VMM is not supported on this device");
    const std::size_t budget = ctx.size_or(tutorial::fit_in_free_memory(
        ctx.quick() ? 256 * MiB : std::size_t{2} << 30, 0.25, 2 * MiB));
    if (budget < least_budget)
        return ctx.skip(tutorial::why_too_little_free(
            4 * least_budget, "for a budget of 192 MiB in a quarter of it"));
    // The kernels that fill and read the blocks are loaded at their first launch, which takes
    // device memory of its own: load them now, before the walkthrough reads the free memory.
    std::uint32_t* scratch = nullptr;
    CUDA_CHECK(cudaMalloc(&scratch, 4096));
    fill_on_device(scratch, 1024, 1);
    const std::size_t warm_wrong = mismatches_on_device(scratch, 1024, 1);
    CUDA_CHECK(cudaFree(scratch));

    std::printf(
        "A budget of %s. Both allocators replay one pattern, a forward pass through 12 layers:\n"
        "each allocates its output (kept) and a workspace nearly twice as large (freed when the\n"
        "layer is done), 5%% larger a layer, in assorted sizes. Then comes a request for a\n"
        "quarter of the budget. First a caching allocator on cudaMalloc'd segments (best fit,\n"
        "split, merge, a new segment only when no free block fits), then an expandable segment:\n"
        "one reserved range with %s chunks mapped as far as its blocks reach.\n\n",
        format_bytes(budget).c_str(),
        format_bytes(tutorial::vmm_granularity(tutorial::vmm_properties(ctx.device))).c_str());
    tutorial::StepTimes times;
    const Found f = walkthrough(ctx.device, budget);
    print_books(f);
    const Measured m = measure(f);
    narrate(f, m, budget, times);
    const bool model_holds = check_model(f, m);
    const auto again = [&] { return measure(walkthrough(ctx.device, budget)); };
    claim_device(ctx, m, f.chunk, again);
    const std::size_t wrong = f.caching.wrong + f.segment.wrong;
    return ctx.verdict(
        model_holds && warm_wrong == 0,
        format("within %s, the caching allocator %s the %s request and the expandable segment "
               "%s it, as the model has it; %zu values wrong at their addresses",
               format_bytes(budget).c_str(), f.caching.served ? "served" : "refused",
               format_bytes(f.request).c_str(), f.segment.served ? "served" : "refused", wrong));
}

TUTORIAL_SECTION(fragmentation, run_fragmentation);
