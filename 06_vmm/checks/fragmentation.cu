// Checks of section fragmentation: runs ../fragmentation.cu's walkthrough within a budget taken
// from free memory, times its two replays, prints both allocators' books after each layer and at
// the large request, with the device memory the driver counted, and judges the claims.
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

// The walkthrough's steps, by the names it gives them.
constexpr const char* caching_step = "replay on the caching allocator";
constexpr const char* segment_step = "replay on the expandable segment";

// Below this budget the segments' 2 MiB rounding is a large part of each block, and the
// pattern no longer leaves the caching allocator's free memory in pieces.
constexpr std::size_t least_budget = 192 * MiB;

double as_mib(std::size_t bytes) {
    return static_cast<double>(bytes) / MiB;
}

// What the claims measure, from one walkthrough.
struct Measured {
    double free_per_request;     // the caching allocator's free blocks / the request, if refused
    double largest_per_request;  // its largest free block / the request
    double peak_ratio;           // the segment's peak bytes in use / the caching allocator's
    double excess_kib;           // the segment: most device memory taken beyond the bytes in use
    std::size_t peak_caching, peak_segment;
};

std::size_t peak_in_use(const Replay& replay) {
    std::size_t peak = 0;
    for (const Books& books : replay.after) peak = std::max(peak, books.used);
    return peak;
}

Measured measure(const Found& f) {
    Measured m{};
    const auto request = static_cast<double>(f.request);
    const Books& c = f.caching.after.back();  // after the request: what it refused with
    m.free_per_request = f.caching.served ? 0.0 : static_cast<double>(c.held - c.used) / request;
    m.largest_per_request = static_cast<double>(c.largest_free) / request;
    m.peak_caching = peak_in_use(f.caching);
    m.peak_segment = peak_in_use(f.segment);
    m.peak_ratio = static_cast<double>(m.peak_segment) / static_cast<double>(m.peak_caching);
    std::size_t excess = 0;
    for (std::size_t i = 0; i < f.segment.after.size(); ++i) {
        const std::size_t used = f.segment.after[i].used;
        const std::size_t taken = f.segment.taken[i];
        if (taken > used) excess = std::max(excess, taken - used);
    }
    m.excess_kib = static_cast<double>(excess) / 1024.0;
    return m;
}

// Both allocators' books after each layer (its workspace freed) and after the large request.
void print_books(const Found& f) {
    tutorial::Table table({{"after"},
                           {"caching: in use", Align::right},
                           {"cudaMalloc'd", Align::right},
                           {"largest free block", Align::right},
                           {"segment: in use", Align::right},
                           {"mapped (cudaMemGetInfo)", Align::right}});
    table.named("books");
    const auto mib = [](std::size_t bytes) { return format("%.1f MiB", as_mib(bytes)); };
    const std::size_t rows = std::min(f.caching.after.size(), f.segment.after.size());
    for (std::size_t i = 0; i < rows; ++i) {
        const bool request = i + 1 == rows;
        if (!request && i % 3 != 2) continue;  // each layer's three events: output, workspace, free
        const Books& c = f.caching.after[i];
        const Books& s = f.segment.after[i];
        table.add_row({request ? "the large request" : format("layer %zu", i / 3 + 1), mib(c.used),
                       mib(c.held), mib(c.largest_free), mib(s.used), mib(f.segment.taken[i])});
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
        times.median_host_ms(caching_step), times.median_host_ms(segment_step),
        format_bytes(f.chunk).c_str());
}

void claim_caching(tutorial::Context& ctx, const Measured& m,
                   const std::function<Measured()>& again) {
    ctx.claim(tutorial::at_least("free_adds_up",
                                 "the caching allocator refuses the large request although its "
                                 "free blocks add up to more (free in its blocks / the request; "
                                 "0 if it served it)",
                                 m.free_per_request, 1.1, "x",
                                 "the pattern left little free in the segments, or the allocator "
                                 "served the request: was the budget too large for the pattern?")
                  .again([&] { return again().free_per_request; }));
    ctx.claim(tutorial::at_most("largest_too_small",
                                "...and its largest free block is smaller than the request "
                                "(largest free block / the request)",
                                m.largest_per_request, 0.8, "x",
                                "a segment kept a free block as large as the request: did the "
                                "workspaces stop growing?")
                  .again([&] { return again().largest_per_request; }));
}

void claim_segment(tutorial::Context& ctx, const Found& f, const Measured& m, std::size_t chunk,
                   const std::function<Measured()>& again) {
    // Whether the segment serves the request is the course's allocator at work (the verdict
    // checks it): the Guide gives the mechanism, not the outcome.
    ctx.claim(tutorial::observed(
        "segment_serves",
        "the expandable segment serves the same request: chunks mapped behind its last block "
        "make one range of addresses with it",
        f.segment.served,
        f.segment.served ? format("served %s", format_bytes(f.request).c_str()) : "refused",
        "the Guide (E.6 Mapping Memory) says memory can be mapped and unmapped at the same "
        "address range as often as needed, as long as no mapping is made over one already "
        "there; whether a request is served is up to the allocator built on it, which the "
        "verdict checks"));
    ctx.claim(tutorial::at_least("peak_higher",
                                 "the expandable segment's peak use of the budget is higher (its "
                                 "peak bytes in use / the caching allocator's)",
                                 m.peak_ratio, 1.15, "x",
                                 "the segment refused the request too, or the caching allocator "
                                 "served it")
                  .again([&] { return again().peak_ratio; }));
    ctx.claim(tutorial::at_most("mapped_follows_use",
                                "in the segment, device memory taken minus the bytes in use stays "
                                "within one chunk after every event (the most, from "
                                "cudaMemGetInfo)",
                                m.excess_kib, static_cast<double>(chunk) / 1024.0, " KiB",
                                "chunks stayed mapped behind the last block in use, or were "
                                "unmapped but not released: does free() shrink, and does "
                                "shrink() call cuMemRelease?")
                  .again([&] { return again().excess_kib; }));
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
    const auto again = [&] { return measure(walkthrough(ctx.device, budget)); };
    claim_caching(ctx, m, again);
    claim_segment(ctx, f, m, f.chunk, again);
    const std::size_t wrong = f.caching.wrong + f.segment.wrong;
    // The course's segment keeps its blocks in place (the verdict checks the values); cuMemMap's
    // "not currently mapped" is a rule for the caller, not a promise about an allocator.
    ctx.claim(tutorial::observed(
        "pointers_stay",
        "no pointer the segment handed out moves: every block in use at the end reads its values "
        "at the address it was given, after every grow and shrink",
        f.segment.wrong == 0,
        format("%zu values wrong in the segment's blocks, %zu in the caching allocator's",
               f.segment.wrong, f.caching.wrong),
        "the cuMemMap entry states only a precondition (mappings only on reserved ranges not "
        "currently mapped); that blocks keep their values depends on the segment's grow and "
        "shrink, which the verdict checks"));
    const bool compared = f.caching.pattern_fit && f.segment.pattern_fit && !f.caching.served &&
                          f.segment.served && wrong + warm_wrong == 0;
    return ctx.verdict(
        compared,
        format("within %s, the caching allocator %s the %s request and the "
               "expandable segment %s it; %zu values wrong at their addresses",
               format_bytes(budget).c_str(), f.caching.served ? "served" : "refused",
               format_bytes(f.request).c_str(), f.segment.served ? "served" : "refused", wrong));
}

TUTORIAL_SECTION(fragmentation, run_fragmentation);
