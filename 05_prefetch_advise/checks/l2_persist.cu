// Checks of section l2_persist: runs ../l2_persist.cu's walkthrough round after round and times
// its four ways (the kernel without a window and with the stream's, the graph captured without
// one as captured and with the window on its kernel node); what it read back of the window, the
// captured node and the limit; every way's sums.
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

enum Way : std::size_t { no_window, stream_window, graph_as_captured, graph_node_window, ways };
const char* const way_name[ways] = {
    "kernel, no window",
    "kernel, the stream's window",
    "graph captured with no window, in the stream with one",
    "the same graph, the window on its kernel node",
};

struct Measured {
    Found found;                       // the last walkthrough's
    int launches = 0;                  // per way and walkthrough
    double ms[ways] = {};              // per kernel, median over the rounds
    std::size_t right[ways] = {};      // walkthroughs whose sums matched the fill's total
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
        for (std::size_t way = 0; way < ways; ++way) m.right[way] += m.found.sums[way] == m.found.expected;
    }
    for (std::size_t way = 0; way < ways; ++way) {
        m.ms[way] = times.median_ms(way_name[way]) / m.launches;
    }
    return m;
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

// What the kernel reads, each float4 counted once where a warp reads it: the stream once and the
// hot table once a sweep. From memory it needs at least the stream and the table once.
double sweeps(const Found& f) {
    return static_cast<double>(f.stream_bytes) / (2.0 * static_cast<double>(f.hot_bytes));
}

std::size_t bytes_read(const Found& f) {
    return f.stream_bytes + static_cast<std::size_t>(sweeps(f) * static_cast<double>(f.hot_bytes));
}

void print_table(const Measured& m, double peak_gbps) {
    tutorial::Table table({{"how"},
                           {"ms per kernel", tutorial::Align::right},
                           {"GB/s read", tutorial::Align::right},
                           {"of peak", tutorial::Align::right}});
    for (std::size_t way = 0; way < ways; ++way) {
        const double gbps = tutorial::gb_per_s(bytes_read(m.found), m.ms[way]);
        table.add_row({way_name[way], format("%.3f", m.ms[way]), format("%.0f", gbps),
                       peak_gbps > 0.0 ? format("%.0f%%", 100.0 * gbps / peak_gbps) : "?"});
    }
    table.print();
}

void report(const Measured& m, int device) {
    const Found& f = m.found;
    std::printf(
        "L2: %s; up to %s of it may hold persisting lines (cudaDeviceSetLimit asked for that,\n"
        "cudaDeviceGetLimit reads %s); one window may cover up to %s.\n\n",
        format_bytes(f.sizes.l2_bytes).c_str(), format_bytes(f.set_aside).c_str(),
        format_bytes(f.limit).c_str(), format_bytes(f.sizes.max_window_bytes).c_str());
    std::printf(
        "A hot table of %s read in %.1f sweeps while %s stream past (twice the table between\n"
        "two sweeps); the median of %d walkthroughs, %d launches a way:\n\n",
        format_bytes(f.hot_bytes).c_str(), sweeps(f), format_bytes(f.stream_bytes).c_str(),
        m.rounds, m.launches);
    const double peak = tutorial::peak_memory_gbps(device);
    print_table(m, peak);
    const double at_best =
        static_cast<double>(bytes_read(f)) / static_cast<double>(f.stream_bytes + f.hot_bytes);
    std::printf(
        "\nGB/s read: the stream once and the hot table once a sweep, %s a kernel, against the\n"
        "memory's peak of %.0f GB/s; above 100%%, the L2 served the rest. Were the memory the\n"
        "only limit, a table read from memory once instead of every sweep saves at most %.2fx.\n\n",
        format_bytes(bytes_read(f)).c_str(), peak, at_best);
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
    const std::string no_set_aside =
        f.limit == 0 ? "cudaDeviceGetLimit reads 0: the driver set no L2 aside" : "";
    const auto again = [&](std::size_t slow, std::size_t fast) {
        return [&, slow, fast] {
            const Measured n = measure(ctx.device, ctx.quick());
            return n.ms[slow] / n.ms[fast];
        };
    };
    ctx.claim(tutorial::at_least(
                  "stream_window_faster",
                  "with the stream's window on the hot table the kernel runs faster (no window / "
                  "window)",
                  m.ms[no_window] / m.ms[stream_window], 1.05, "x",
                  "the table stayed in L2 without the window too, or the memory was not the limit")
                  .again(again(no_window, stream_window)),
              no_set_aside);
    ctx.claim(tutorial::at_least(
                  "graph_needs_node_window",
                  "a graph captured with no window does not take the stream's: the window on its "
                  "kernel node makes it faster (stream's window only / node's window)",
                  m.ms[graph_as_captured] / m.ms[graph_node_window], 1.05, "x",
                  "the graph's kernel ran with the stream's window after all")
                  .again(again(graph_as_captured, graph_node_window)),
              no_set_aside);
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

    std::size_t right = 0;
    for (std::size_t way = 0; way < ways; ++way) right += m.right[way] == std::size_t(m.rounds);
    return ctx.verdict(
        right == ways,
        format("the sums of %zu of %zu ways added up to %llu, the fill's total, in all %d "
               "walkthroughs",
               right, static_cast<std::size_t>(ways), static_cast<unsigned long long>(f.expected),
               m.rounds));
}

TUTORIAL_SECTION(l2_persist, run_l2_persist);
