// Checks of section l2_persist: runs ../l2_persist.cu's walkthrough round after round and times
// its six ways (the table alone, the stream alone, the work without a window and with the
// stream's, the graph captured without one as captured and with the window on its kernel node);
// what it read back of the window, the captured node and the limit; every way's sums.
#include "05_prefetch_advise/l2_persist.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/steps.hpp"
#include "common/text.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using tutorial::format;
using tutorial::format_bytes;

struct Measured {
    Found found;                   // the last walkthrough's
    int launches = 0;              // per way and walkthrough
    double ms[ways] = {};          // per kernel, median over the rounds
    std::size_t right[ways] = {};  // walkthroughs whose sums matched the known values
    int rounds = 0;
};

// The walkthrough `rounds` times after two warm-ups; each way's median per kernel (events on
// the walkthrough's stream).
Measured measure(int device, bool quick) {
    Measured m;
    m.launches = quick ? 3 : 5;
    m.rounds = quick ? 7 : 15;
    for (int w = 0; w < 2; ++w) walkthrough(device, 1);
    tutorial::StepTimes times;
    for (int r = 0; r < m.rounds; ++r) {
        m.found = walkthrough(device, m.launches);
        for (int way = 0; way < ways; ++way) {
            m.right[way] += m.found.sums[way] == m.found.expected[way];
        }
    }
    for (int way = 0; way < ways; ++way) {
        m.ms[way] = times.median_ms(way_step[way]) / m.launches;
    }
    return m;
}

// What the lookups of one way cost: its time above the stream alone's (at least 1% of that, so
// that a ratio stays finite where the lookups came almost free).
double lookups_ms(const Measured& m, Way way) {
    return std::max(m.ms[way] - m.ms[stream_alone], 0.01 * m.ms[stream_alone]);
}

// The claims' ratio: what the lookups cost without the window (or with the stream's window only,
// for the graph) over what they cost with it.
double lookups_ratio(const Measured& m, Way slow, Way fast) {
    return lookups_ms(m, slow) / lookups_ms(m, fast);
}

// How much of the stream passes between two lookups of one 32-byte piece of the table: one piece
// is looked up every hot_bytes / 32 lookups, and each lookup comes with 8 float4s of stream.
double streamed_between(const Found& f) {
    return static_cast<double>(f.hot_bytes) / 32.0 * stream_reads_per_lookup * sizeof(float4);
}

long long window_offset(const Found& f) {
    return static_cast<const char*>(f.stream_window.base_ptr) -
           static_cast<const char*>(f.table);
}

bool is_the_window(const Found& f) {
    const cudaAccessPolicyWindow& w = f.stream_window;
    return window_offset(f) == 0 && w.num_bytes == f.hot_bytes && w.hitRatio >= 1.0f &&
           w.hitRatio <= 1.0f && w.hitProp == cudaAccessPropertyPersisting &&
           w.missProp == cudaAccessPropertyStreaming;
}

const char* property_name(cudaAccessProperty p) {
    switch (p) {
        case cudaAccessPropertyNormal: return "Normal";
        case cudaAccessPropertyStreaming: return "Streaming";
        case cudaAccessPropertyPersisting: return "Persisting";
    }
    return "?";
}

std::string describe(const cudaAccessPolicyWindow& w) {
    return format("num_bytes %zu, hitRatio %.2f, hitProp %s, missProp %s", w.num_bytes,
                  static_cast<double>(w.hitRatio), property_name(w.hitProp),
                  property_name(w.missProp));
}

void print_table(const Measured& m, double peak_gbps) {
    const Found& f = m.found;
    tutorial::Table table({{"how"},
                           {"ms per kernel", tutorial::Align::right},
                           {"of it the lookups, ms", tutorial::Align::right},
                           {"lookups per ns", tutorial::Align::right}});
    for (int way = 0; way < ways; ++way) {
        const Way w = static_cast<Way>(way);
        const bool table_only = w == table_alone;
        const double lookups = table_only ? m.ms[w] : lookups_ms(m, w);
        table.add_row({way_step[way].name, format("%.4f", m.ms[way]),
                       w == stream_alone ? "-" : format("%.4f", lookups),
                       w == stream_alone ? "-"
                                         : format("%.1f", static_cast<double>(f.lookups) /
                                                              (lookups * 1e6))});
    }
    table.print();
    std::printf(
        "\nThe stream alone reads %s at %.0f GB/s (%.0f%% of the memory's %.0f GB/s). \"Of it the\n"
        "lookups\" is a way's time above the stream alone's (the table alone: all of its time).\n\n",
        format_bytes(f.stream_bytes).c_str(), tutorial::gb_per_s(f.stream_bytes, m.ms[stream_alone]),
        peak_gbps > 0.0 ? 100.0 * tutorial::gb_per_s(f.stream_bytes, m.ms[stream_alone]) / peak_gbps
                        : 0.0,
        peak_gbps);
}

void report(const Measured& m, int device) {
    const Found& f = m.found;
    std::printf(
        "L2: %s; up to %s of it may hold persisting lines (cudaDeviceSetLimit asked for that,\n"
        "cudaDeviceGetLimit reads %s); one window may cover up to %s.\n\n",
        format_bytes(f.sizes.l2_bytes).c_str(), format_bytes(f.set_aside).c_str(),
        format_bytes(f.limit).c_str(), format_bytes(f.sizes.max_window_bytes).c_str());
    std::printf(
        "A hot table of %s looked up %zu times at scattered places while %s stream past:\n"
        "between two lookups of one 32-byte piece of the table, %s of the stream (%.1f times the\n"
        "L2). The median of %d walkthroughs, %d launches a way:\n\n",
        format_bytes(f.hot_bytes).c_str(), f.lookups, format_bytes(f.stream_bytes).c_str(),
        format_bytes(static_cast<std::size_t>(streamed_between(f))).c_str(),
        streamed_between(f) / f.sizes.l2_bytes, m.rounds, m.launches);
    print_table(m, tutorial::peak_memory_gbps(device));
    std::printf(
        "Without a window the lookups cost %.2fx what they cost with the table alone, which stays\n"
        "in L2: the stream pushed the table out, and most lookups went to memory. With the window\n"
        "its lines persist, and the lookups cost %.2fx the table alone's.\n\n",
        lookups_ms(m, no_window) / m.ms[table_alone],
        lookups_ms(m, stream_window) / m.ms[table_alone]);
}
}  // namespace

tutorial::Result run_l2_persist(tutorial::Context& ctx) {
    const L2Sizes sizes = l2_sizes(ctx.device);
    if (sizes.max_persisting_bytes == 0) {
        return ctx.skip("cudaDevAttrMaxPersistingL2CacheSize = 0: no L2 can be set aside here");
    }
    const cudaError_t allowed = cudaDeviceSetLimit(
        cudaLimitPersistingL2CacheSize, static_cast<std::size_t>(sizes.max_persisting_bytes));
    if (allowed != cudaSuccess) {
        (void)cudaGetLastError();
        return ctx.skip(
            std::string("cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize) returned ") +
            cudaGetErrorName(allowed) +
            " (the Programming Guide: MIG disables the set-aside, MPS fixes it)");
    }
    const Measured m = measure(ctx.device, ctx.quick());
    report(m, ctx.device);
    const Found& f = m.found;
    // Where the stream between two lookups of one piece is not well over the L2, the table may
    // stay in L2 without a window, and there is nothing for the window to win.
    const std::string why_not = f.limit == 0
                                    ? "cudaDeviceGetLimit reads 0: the driver set no L2 aside"
                                : streamed_between(f) < 1.5 * f.sizes.l2_bytes
                                    ? format("only %s streams past between two lookups of one "
                                             "piece, less than 1.5 times the L2: the table need "
                                             "not leave it",
                                             format_bytes(static_cast<std::size_t>(
                                                              streamed_between(f)))
                                                 .c_str())
                                    : "";
    const auto again = [&](Way slow, Way fast) {
        return [&, slow, fast] { return lookups_ratio(measure(ctx.device, ctx.quick()), slow, fast); };
    };
    ctx.claim(tutorial::at_least(
                  "stream_window_faster",
                  "the stream's window on the hot table makes its lookups cost less (lookup time, "
                  "no window / window)",
                  lookups_ratio(m, no_window, stream_window), 1.3, "x",
                  "the table stayed in L2 without the window too, or its lines did not persist "
                  "with it")
                  .again(again(no_window, stream_window)),
              why_not);
    ctx.claim(tutorial::at_least(
                  "graph_needs_node_window",
                  "a captured graph's lookups cost less with the window on its kernel node (lookup "
                  "time, stream's / node's)",
                  lookups_ratio(m, graph_as_captured, graph_node_window), 1.3, "x",
                  "the graph's kernel ran with the stream's window after all")
                  .again(again(graph_as_captured, graph_node_window)),
              why_not);
    ctx.claim(tutorial::observed(
        "window_reads_back",
        "cudaStreamGetAttribute gives back the window that was set", is_the_window(f),
        format("base_ptr the table %+lld, ", window_offset(f)) + describe(f.stream_window),
        "the cudaAccessPolicyWindow reference lets the driver align base_ptr and restrict "
        "num_bytes"));
    ctx.claim(tutorial::observed(
        "captured_node_has_none",
        "a kernel node captured from a stream with no window has none (num_bytes 0)",
        f.captured_status == cudaSuccess && f.captured_window.num_bytes == 0,
        std::string("cudaGraphKernelNodeGetAttribute returned ") +
            cudaGetErrorName(f.captured_status) + ", " + describe(f.captured_window),
        "the cudaGraphKernelNodeGetAttribute entry does not say what a captured node starts "
        "with"));
    ctx.claim(tutorial::observed(
        "limit_reads_back",
        "cudaDeviceGetLimit reads back the persisting L2 size that was set", f.limit == f.set_aside,
        format("set %zu, read %zu bytes", f.set_aside, f.limit),
        "the cudaDeviceSetLimit entry calls cudaLimitPersistingL2CacheSize a hint that can be "
        "ignored or clamped"));

    int right = 0;
    for (int way = 0; way < ways; ++way) right += m.right[way] == std::size_t(m.rounds);
    return ctx.verdict(
        right == ways,
        format("the sums of %d of %d ways added up to what the known values give (%llu with the "
               "table and the stream), in all %d walkthroughs",
               right, int{ways}, static_cast<unsigned long long>(f.expected[no_window]),
               m.rounds));
}

TUTORIAL_SECTION(l2_persist, run_l2_persist);
