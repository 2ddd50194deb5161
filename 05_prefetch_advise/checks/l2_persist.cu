// Checks of section l2_persist: ../l2_persist.cu's kernel timed without a window and with the
// stream's window, and as a graph captured without one, launched as captured and with the window
// on its kernel node; the window, the captured node and the limit read back; every way's sums.
#include "05_prefetch_advise/l2_persist.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
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
using tutorial::KiB;
using tutorial::MiB;

// The known fill: each lane of the stream's float4 i holds i % 3, of the hot table's float4 j,
// j % 7. Small whole numbers, so that every thread's float sum is exact.
__global__ void fill_known(float4* data, std::size_t n, unsigned modulus) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float v = static_cast<float>(i % modulus);
        data[i] = make_float4(v, v, v, v);
    }
}

// What the kernel's sums add up to, from the fill alone.
std::uint64_t expected_sum(std::size_t stream_n, std::size_t hot_n) {
    std::uint64_t sum = 0;
    std::size_t h = 0;  // (i / 2) % hot_n
    for (std::size_t i = 0; i < stream_n; ++i) {
        sum += 4 * (i % 3) + 4 * (h % 7);
        if (i % 2 == 1 && ++h == hot_n) h = 0;
    }
    return sum;
}

enum Way : std::size_t { no_window, stream_window, graph_as_captured, graph_node_window, ways };
const char* const way_name[ways] = {
    "kernel, no window",
    "kernel, the stream's window",
    "graph captured with no window, in the stream with one",
    "the same graph, the window on its kernel node",
};

struct Setup {
    Tables t;
    std::size_t window_bytes = 0;
    cudaStream_t stream = nullptr;
    cudaGraph_t graphs[2] = {};  // both captured with no window; the second gets the node's
    cudaGraphExec_t execs[2] = {};
};

struct Measured {
    L2Sizes sizes;
    std::size_t set_aside = 0;  // asked of cudaDeviceSetLimit
    std::size_t limit = 0;      // what cudaDeviceGetLimit read after it
    std::size_t hot_bytes = 0;
    std::size_t stream_bytes = 0;
    cudaAccessPolicyWindow stream_read{};       // cudaStreamGetAttribute after the set
    long long stream_read_offset = 0;           // its base_ptr - the hot table's address
    cudaError_t captured_status = cudaSuccess;  // cudaGraphKernelNodeGetAttribute...
    cudaAccessPolicyWindow captured_read{};     // ...on the node captured with no window
    int launches = 0;                           // per timed run
    std::vector<tutorial::Spread> ms;           // per kernel, each way
    std::uint64_t expected = 0;
    std::uint64_t sums[ways] = {};
};

// The hot table three quarters of the persisting L2, the stream 16 times the table (less where
// that passes 600 MiB in all or where the GPU has little free memory).
Measured sized(const L2Sizes& sizes) {
    Measured m;
    m.sizes = sizes;
    m.set_aside = static_cast<std::size_t>(sizes.max_persisting_bytes);
    const std::size_t unit = 64 * KiB;
    const std::size_t hot =
        std::min(m.set_aside / 4 * 3, static_cast<std::size_t>(sizes.max_window_bytes));
    m.hot_bytes = std::max(unit, hot / unit * unit);
    const std::size_t stream = std::min(16 * m.hot_bytes, 600 * MiB - m.hot_bytes) / unit * unit;
    m.stream_bytes = tutorial::fit_in_free_memory(stream, 0.5, unit);
    return m;
}

// Two graphs captured before any window is set, the second given the window on its node; then
// the window on the stream. What the captured node and the stream say is kept.
Setup set_up(int device, Measured& m) {
    Setup s;
    s.t = allocate_tables(device, m.hot_bytes, m.stream_bytes);
    s.window_bytes = m.hot_bytes;
    fill_known<<<1024, 256>>>(s.t.stream, s.t.stream_n, 3);
    CUDA_CHECK_LAUNCH();
    fill_known<<<1024, 256>>>(s.t.hot, s.t.hot_n, 7);
    CUDA_CHECK_LAUNCH_SYNC();
    CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    for (cudaGraph_t& graph : s.graphs) graph = capture_reads(s.t, s.stream);
    cudaKernelNodeAttrValue captured{};
    m.captured_status = cudaGraphKernelNodeGetAttribute(
        kernel_node(s.graphs[0]), cudaKernelNodeAttributeAccessPolicyWindow, &captured);
    (void)cudaGetLastError();  // a refusal is reported, not fatal
    m.captured_read = captured.accessPolicyWindow;
    set_node_window(kernel_node(s.graphs[1]), s.t.hot, s.window_bytes);
    for (int g = 0; g < 2; ++g) s.execs[g] = instantiate(s.graphs[g]);
    set_stream_window(s.stream, s.t.hot, s.window_bytes);
    cudaStreamAttrValue read{};
    CUDA_CHECK(cudaStreamGetAttribute(s.stream, cudaStreamAttributeAccessPolicyWindow, &read));
    m.stream_read = read.accessPolicyWindow;
    m.stream_read_offset =
        static_cast<const char*>(m.stream_read.base_ptr) - reinterpret_cast<const char*>(s.t.hot);
    return s;
}

// Every way starts from an L2 without persisting lines, or the lines a way with a window left
// would still persist through the next way's run.
void prepare(const Setup& s, std::size_t way) {
    if (way == no_window) {
        remove_stream_window(s.stream);  // and cudaCtxResetPersistingL2Cache
    } else {
        set_stream_window(s.stream, s.t.hot, s.window_bytes);
        CUDA_CHECK(cudaCtxResetPersistingL2Cache());
    }
}

void launch(const Setup& s, std::size_t way) {
    if (way == graph_as_captured) {
        launch_graph(s.execs[0], s.stream);
    } else if (way == graph_node_window) {
        launch_graph(s.execs[1], s.stream);
    } else {
        launch_reads(s.t, s.stream);
    }
}

void time_ways(const Setup& s, bool quick, Measured& m) {
    m.launches = quick ? 3 : 5;
    tutorial::EventTimer timer(s.stream);
    m.ms = tutorial::interleaved_ms(ways, 2, quick ? 7 : 15, [&](std::size_t way) {
        prepare(s, way);
        timer.start();
        for (int r = 0; r < m.launches; ++r) launch(s, way);
        timer.stop();
        return timer.elapsed_ms() / m.launches;
    });
}

// Each way once more, its sums zeroed first and added up on the CPU.
void add_up_sums(const Setup& s, Measured& m) {
    const std::size_t threads = static_cast<std::size_t>(s.t.blocks) * threads_per_block;
    std::vector<float> sums(threads);
    m.expected = expected_sum(s.t.stream_n, s.t.hot_n);
    for (std::size_t way = 0; way < ways; ++way) {
        prepare(s, way);
        CUDA_CHECK(cudaMemsetAsync(s.t.sums, 0, threads * sizeof(float), s.stream));
        launch(s, way);
        CUDA_CHECK(cudaMemcpyAsync(sums.data(), s.t.sums, threads * sizeof(float),
                                   cudaMemcpyDeviceToHost, s.stream));
        CUDA_CHECK(cudaStreamSynchronize(s.stream));
        for (float v : sums) m.sums[way] += static_cast<std::uint64_t>(v);
    }
}

Measured measure(int device, const L2Sizes& sizes, bool quick) {
    Measured m = sized(sizes);
    set_aside_persisting_l2(m.set_aside);
    CUDA_CHECK(cudaDeviceGetLimit(&m.limit, cudaLimitPersistingL2CacheSize));
    Setup s = set_up(device, m);
    time_ways(s, quick, m);
    add_up_sums(s, m);
    give_back_l2(s.stream);
    for (int g = 0; g < 2; ++g) {
        CUDA_CHECK(cudaGraphExecDestroy(s.execs[g]));
        CUDA_CHECK(cudaGraphDestroy(s.graphs[g]));
    }
    CUDA_CHECK(cudaStreamDestroy(s.stream));
    free_tables(s.t);
    return m;
}

bool is_the_window(const Measured& m) {
    const cudaAccessPolicyWindow& w = m.stream_read;
    return m.stream_read_offset == 0 && w.num_bytes == m.hot_bytes && w.hitRatio >= 1.0f &&
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
double sweeps(const Measured& m) {
    return static_cast<double>(m.stream_bytes) / (2.0 * static_cast<double>(m.hot_bytes));
}

std::size_t bytes_read(const Measured& m) {
    return m.stream_bytes + static_cast<std::size_t>(sweeps(m) * static_cast<double>(m.hot_bytes));
}

void print_table(const Measured& m, double peak_gbps) {
    tutorial::Table table({{"how"},
                           {"ms per kernel", tutorial::Align::right},
                           {"GB/s read", tutorial::Align::right},
                           {"of peak", tutorial::Align::right}});
    for (std::size_t way = 0; way < ways; ++way) {
        const double gbps = tutorial::gb_per_s(bytes_read(m), m.ms[way].median);
        table.add_row({way_name[way], format("%.3f", m.ms[way].median), format("%.0f", gbps),
                       peak_gbps > 0.0 ? format("%.0f%%", 100.0 * gbps / peak_gbps) : "?"});
    }
    table.print();
}

void report(const Measured& m, int device) {
    std::printf(
        "L2: %s; up to %s of it may hold persisting lines (cudaDeviceSetLimit asked for that,\n"
        "cudaDeviceGetLimit reads %s); one window may cover up to %s.\n\n",
        format_bytes(m.sizes.l2_bytes).c_str(), format_bytes(m.set_aside).c_str(),
        format_bytes(m.limit).c_str(), format_bytes(m.sizes.max_window_bytes).c_str());
    std::printf(
        "A hot table of %s read in %.1f sweeps while %s stream past (twice the table between\n"
        "two sweeps); the median of the rounds, %d launches a run:\n\n",
        format_bytes(m.hot_bytes).c_str(), sweeps(m), format_bytes(m.stream_bytes).c_str(),
        m.launches);
    const double peak = tutorial::peak_memory_gbps(device);
    print_table(m, peak);
    const double at_best =
        static_cast<double>(bytes_read(m)) / static_cast<double>(m.stream_bytes + m.hot_bytes);
    std::printf(
        "\nGB/s read: the stream once and the hot table once a sweep, %s a kernel, against the\n"
        "memory's peak of %.0f GB/s; above 100%%, the L2 served the rest. Were the memory the\n"
        "only limit, a table read from memory once instead of every sweep saves at most %.2fx.\n\n",
        format_bytes(bytes_read(m)).c_str(), peak, at_best);
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
    const Measured m = measure(ctx.device, sizes, ctx.quick());
    report(m, ctx.device);

    const std::string no_set_aside =
        m.limit == 0 ? "cudaDeviceGetLimit reads 0: the driver set no L2 aside" : "";
    ctx.claim(tutorial::at_least(
                  "with the stream's window on the hot table the kernel runs faster (no window / "
                  "window)",
                  m.ms[no_window].median / m.ms[stream_window].median, 1.05, "x",
                  "the table stayed in L2 without the window too, or the memory was not the limit"),
              no_set_aside);
    ctx.claim(tutorial::at_least(
                  "a graph captured with no window does not take the stream's: the window on its "
                  "kernel node makes it faster (stream's window only / node's window)",
                  m.ms[graph_as_captured].median / m.ms[graph_node_window].median, 1.05, "x",
                  "the graph's kernel ran with the stream's window after all"),
              no_set_aside);
    ctx.claim(tutorial::observed(
        "cudaStreamGetAttribute gives back the window that was set", is_the_window(m),
        format("base_ptr the table %+lld, ", m.stream_read_offset) + describe(m.stream_read),
        "the cudaAccessPolicyWindow reference lets the driver align base_ptr and restrict "
        "num_bytes"));
    ctx.claim(tutorial::observed(
        "a kernel node captured from a stream with no window has none (num_bytes 0)",
        m.captured_status == cudaSuccess && m.captured_read.num_bytes == 0,
        std::string("cudaGraphKernelNodeGetAttribute returned ") +
            cudaGetErrorName(m.captured_status) + ", " + describe(m.captured_read),
        "the cudaGraphKernelNodeGetAttribute entry does not say what a captured node starts "
        "with"));
    ctx.claim(tutorial::observed(
        "cudaDeviceGetLimit reads back the persisting L2 size that was set", m.limit == m.set_aside,
        format("set %zu, read %zu bytes", m.set_aside, m.limit),
        "the cudaDeviceSetLimit entry calls cudaLimitPersistingL2CacheSize a hint that can be "
        "ignored or clamped"));

    std::size_t right = 0;
    for (std::size_t way = 0; way < ways; ++way) right += m.sums[way] == m.expected;
    return ctx.verdict(
        right == ways,
        format("the sums of %zu of %zu ways added up to %llu, the fill's total", right,
               static_cast<std::size_t>(ways), static_cast<unsigned long long>(m.expected)));
}

TUTORIAL_SECTION(l2_persist, run_l2_persist);
