// Section l2_persist: can a table every thread looks up stay in L2 while a big buffer streams past?
// Persisting L2, and an access policy window on a stream, then on a graph's kernel node. Alone:
//   nvcc -std=c++17 -I. 05_prefetch_advise/l2_persist.cu common/standalone.cu -o build/l2_persist
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. l2_persist.cu ../common/standalone.cu
//       -o ../build/l2_persist)  (on the same line)
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/step.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

// How large the L2 is, how much of it may be set aside for persisting lines (0: none on
// this device), and how many bytes one access policy window may cover; then set the part aside.
struct L2Sizes {
    int l2_bytes = 0;
    int max_persisting_bytes = 0;
    int max_window_bytes = 0;
};

// The work's buffers (allocate_tables, below) and its launch's size.
struct Tables {
    float4* stream = nullptr;  // read once per kernel
    std::size_t lookups = 0;   // per kernel: the stream's float4s / 8
    float* hot = nullptr;      // looked up all through the kernel
    std::uint32_t hot_words = 0;
    float* sums = nullptr;  // one per thread
    int blocks = 0;
};

// The walkthrough's steps: the ways it runs the work, each a step of its own, timed wherever
// steps are watched: two controls without a window, then the lookups with the stream, four ways.
enum Way : int {
    table_alone,        // the lookups and no stream: the table fits in L2 and stays there
    stream_alone,       // the stream, every lookup the same word: what the stream costs
    no_window,          // the work, no window: the stream pushes the table out of L2
    stream_window,      // the work, the stream's window on the table
    graph_as_captured,  // a graph captured with no window, launched in the stream with one
    graph_node_window,  // the same graph, the window on its kernel node
    ways
};
constexpr tutorial::Step way_step[ways] = {
    {"the table alone (no stream)"},
    {"the stream alone (every lookup one word)"},
    {"kernel, no window"},
    {"kernel, the stream's window"},
    {"graph captured with no window, in the stream with one"},
    {"the same graph, the window on its kernel node"},
};

// What the walkthrough found: the sizes, what the device reads back of the set-aside part, the
// stream's window and the captured node's, what each way's sums added up to and what the known
// values say they should.
struct Found {
    L2Sizes sizes;
    std::size_t set_aside = 0, limit = 0, hot_bytes = 0, stream_bytes = 0, lookups = 0;
    const void* table = nullptr;
    cudaAccessPolicyWindow stream_window{};  // cudaStreamGetAttribute, after the window is set
    cudaError_t captured_status = cudaSuccess;
    cudaAccessPolicyWindow captured_window{};  // the node captured with no window
    std::uint64_t sums[ways] = {}, expected[ways] = {};
};

// Defined below the walkthrough:
L2Sizes l2_sizes(int device);
void set_aside_persisting_l2(std::size_t bytes);
std::size_t hot_table_bytes(const L2Sizes& s);
std::size_t stream_bytes_for(std::size_t hot_bytes);
Tables allocate_tables(int device, std::size_t hot_bytes, std::size_t stream_bytes);
std::uint64_t expected_sum(const Tables& t, bool with_stream, std::uint32_t words);
cudaGraph_t capture_reads(const Tables& t, cudaStream_t stream);
cudaGraphNode_t kernel_node(cudaGraph_t graph);
void set_node_window(cudaGraphNode_t node, void* base, std::size_t bytes);
cudaGraphExec_t instantiate(cudaGraph_t graph);
std::uint64_t run_way(Way way, const Tables& t, cudaStream_t s, cudaGraphExec_t exec,
                      int launches);
void set_stream_window(cudaStream_t stream, void* base, std::size_t bytes);
void give_back_l2(cudaStream_t stream);
void free_tables(Tables& t);
void launch_graph(cudaGraphExec_t exec, cudaStream_t stream);
void launch_reads(const Tables& t, cudaStream_t stream, bool with_stream, std::uint32_t words);
std::uint64_t added_up(const Tables& t, cudaStream_t stream);

Found walkthrough(int device, int launches) {
    Found f;
    // 1. The L2's sizes; the persisting part set aside (a hint: read back what was granted).
    f.sizes = l2_sizes(device);
    f.set_aside = static_cast<std::size_t>(f.sizes.max_persisting_bytes);
    set_aside_persisting_l2(f.set_aside);
    CUDA_CHECK(cudaDeviceGetLimit(&f.limit, cudaLimitPersistingL2CacheSize));
    // 2. The work: a hot table, and a stream of data 16 times its size.
    f.hot_bytes = hot_table_bytes(f.sizes);
    f.stream_bytes = stream_bytes_for(f.hot_bytes);
    Tables t = allocate_tables(device, f.hot_bytes, f.stream_bytes);
    f.table = t.hot;
    f.lookups = t.lookups;
    for (int way = 0; way < ways; ++way) {
        f.expected[way] = expected_sum(t, way != table_alone, way == stream_alone ? 1 : t.hot_words);
    }
    cudaStream_t s = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    // 3. Two graphs of the same launch, captured while the stream has no window; the second's
    //    kernel node gets the window of its own.
    cudaGraph_t graphs[2] = {capture_reads(t, s), capture_reads(t, s)};
    cudaKernelNodeAttrValue captured{};
    f.captured_status = cudaGraphKernelNodeGetAttribute(
        kernel_node(graphs[0]), cudaKernelNodeAttributeAccessPolicyWindow, &captured);
    (void)cudaGetLastError();  // a refusal is an answer here
    f.captured_window = captured.accessPolicyWindow;
    set_node_window(kernel_node(graphs[1]), t.hot, f.hot_bytes);
    cudaGraphExec_t execs[2] = {instantiate(graphs[0]), instantiate(graphs[1])};
    // 4. No window: the two controls, then the work. The table alone stays in L2; with the
    //    stream, the table is pushed out and its lookups go to memory.
    f.sums[table_alone] = run_way(table_alone, t, s, nullptr, launches);
    f.sums[stream_alone] = run_way(stream_alone, t, s, nullptr, launches);
    f.sums[no_window] = run_way(no_window, t, s, nullptr, launches);
    // 5. The stream's window on the table, read back.
    set_stream_window(s, t.hot, f.hot_bytes);
    cudaStreamAttrValue window{};
    CUDA_CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &window));
    f.stream_window = window.accessPolicyWindow;
    f.sums[stream_window] = run_way(stream_window, t, s, nullptr, launches);
    // 6. The graphs in that stream: the one captured with no window has none; the other has its
    //    node's.
    f.sums[graph_as_captured] = run_way(graph_as_captured, t, s, execs[0], launches);
    f.sums[graph_node_window] = run_way(graph_node_window, t, s, execs[1], launches);
    // 7. Done: the window off, the lines back to normal, the L2 given back.
    give_back_l2(s);
    for (int g = 0; g < 2; ++g) {
        CUDA_CHECK(cudaGraphExecDestroy(execs[g]));
        CUDA_CHECK(cudaGraphDestroy(graphs[g]));
    }
    CUDA_CHECK(cudaStreamDestroy(s));
    free_tables(t);
    return f;
}

// One way to run the work: `launches` kernels (or launches of `exec`, where given), from an L2
// with no persisting lines left by the way before. Returns what the last one's sums add up to.
std::uint64_t run_way(Way way, const Tables& t, cudaStream_t s, cudaGraphExec_t exec,
                      int launches) {
    CUDA_CHECK(cudaCtxResetPersistingL2Cache());
    {
        const tutorial::During during(way_step[way], s);
        for (int i = 0; i < launches; ++i) {
            if (exec != nullptr) {
                launch_graph(exec, s);
            } else {
                launch_reads(t, s, way != table_alone, way == stream_alone ? 1 : 0);
            }
        }
    }
    return added_up(t, s);
}

// Step 1: the L2's three sizes, from the device's attributes.
L2Sizes l2_sizes(int device) {
    L2Sizes s;
    CUDA_CHECK(cudaDeviceGetAttribute(&s.l2_bytes, cudaDevAttrL2CacheSize, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&s.max_persisting_bytes, cudaDevAttrMaxPersistingL2CacheSize,
                                      device));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&s.max_window_bytes, cudaDevAttrMaxAccessPolicyWindowSize, device));
    return s;
}

// A hint: the driver may clamp it or ignore it.
void set_aside_persisting_l2(std::size_t bytes) {
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes));
}

// The work: an input streams past once while every thread looks up a table. Each thread reads
// eight float4s of the stream (coalesced) and then one 4-byte word of the hot table at a place
// that looks random, as a hash table or an embedding lookup would. With `with_stream` false it
// makes the same lookups and reads no stream. A 32-byte piece of the table is looked up again
// only after about table_bytes / 32 other lookups, while 8 x 16 bytes of stream pass with each:
// four times the table streams past between two lookups of one piece, more than the L2 holds.
constexpr int stream_reads_per_lookup = 8;

__host__ __device__ inline std::uint32_t scatter(std::uint32_t i) {  // a cheap integer hash
    i *= 2654435761u;
    i ^= i >> 15;
    i *= 2246822519u;
    i ^= i >> 13;
    return i;
}

__global__ void stream_past_hot(const float4* __restrict__ stream, std::size_t lookups,
                                bool with_stream, const float* __restrict__ hot,
                                std::uint32_t hot_words, float* sums) {
    const std::size_t first = blockIdx.x * blockDim.x + threadIdx.x;
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    float sum = 0.0f;
    for (std::size_t i = first; i < lookups; i += step) {
        if (with_stream) {
#pragma unroll
            for (int j = 0; j < stream_reads_per_lookup; ++j) {
                const float4 s = stream[i + j * lookups];
                sum += s.x + s.y + s.z + s.w;
            }
        }
        sum += hot[scatter(static_cast<std::uint32_t>(i)) % hot_words];
    }
    sums[first] = sum;  // one value per thread, so that no read is optimised away
}

// The sizes: the hot table three quarters of the persisting L2 (at most one window), the stream
// 16 times the table (less where that passes 600 MiB in all, or half the free memory).
std::size_t hot_table_bytes(const L2Sizes& s) {
    const std::size_t unit = 64 << 10;
    const std::size_t hot = std::min(static_cast<std::size_t>(s.max_persisting_bytes) / 4 * 3,
                                     static_cast<std::size_t>(s.max_window_bytes));
    return std::max(unit, hot / unit * unit);
}

std::size_t stream_bytes_for(std::size_t hot_bytes) {
    const std::size_t unit = 64 << 10;  // a multiple of the 8 float4s read per lookup
    const std::size_t wanted = std::min(16 * hot_bytes, (std::size_t{600} << 20) - hot_bytes);
    return tutorial::fit_in_free_memory(wanted / unit * unit, 0.5, unit);
}

// Known values: each lane of stream float4 i holds i % 3, table word w holds w % 7: small
// whole numbers, so that every thread's float sum is exact.
__global__ void fill_known(float4* data, std::size_t n) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float v = static_cast<float>(i % 3);
        data[i] = make_float4(v, v, v, v);
    }
}

__global__ void fill_known(float* data, std::size_t n) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = static_cast<float>(i % 7);
    }
}

constexpr int threads_per_block = 256;

Tables allocate_tables(int device, std::size_t hot_bytes, std::size_t stream_bytes) {
    Tables t;
    t.hot_words = static_cast<std::uint32_t>(hot_bytes / sizeof(float));
    t.lookups = stream_bytes / sizeof(float4) / stream_reads_per_lookup;
    int sms = 0;
    int threads_per_sm = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    t.blocks = sms * (threads_per_sm / threads_per_block);
    CUDA_CHECK(cudaMalloc(&t.hot, hot_bytes));
    CUDA_CHECK(cudaMalloc(&t.stream, stream_bytes));
    CUDA_CHECK(cudaMalloc(&t.sums, sizeof(float) * t.blocks * threads_per_block));
    fill_known<<<1024, 256>>>(t.stream, stream_bytes / sizeof(float4));
    CUDA_CHECK_LAUNCH();
    fill_known<<<1024, 256>>>(t.hot, t.hot_words);
    CUDA_CHECK_LAUNCH_SYNC();
    return t;
}

// What the kernel's sums add up to, from the known values alone: the stream's float4s n hold
// 4 x (n % 3), the word of lookup i holds (scatter(i) % words) % 7.
std::uint64_t expected_sum(const Tables& t, bool with_stream, std::uint32_t words) {
    std::uint64_t sum = 0;
    if (with_stream) {
        const std::uint64_t n = static_cast<std::uint64_t>(t.lookups) * stream_reads_per_lookup;
        sum += 4 * (3 * (n / 3) + (n % 3 == 2 ? 1 : 0));  // 0 + 1 + 2 per three float4s
    }
    for (std::size_t i = 0; i < t.lookups; ++i) {
        sum += (scatter(static_cast<std::uint32_t>(i)) % words) % 7;
    }
    return sum;
}

// What the last kernel's per-thread sums add up to.
std::uint64_t added_up(const Tables& t, cudaStream_t stream) {
    std::vector<float> sums(static_cast<std::size_t>(t.blocks) * threads_per_block);
    CUDA_CHECK(cudaMemcpyAsync(sums.data(), t.sums, sums.size() * sizeof(float),
                               cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::uint64_t total = 0;
    for (float v : sums) total += static_cast<std::uint64_t>(v);
    return total;
}

// The lookups, with the stream (every way below but one) or without it (the table alone); `words`
// is the table's size, or 1 for "every lookup the same word" (the stream alone, in effect).
void launch_reads(const Tables& t, cudaStream_t stream, bool with_stream = true,
                  std::uint32_t words = 0) {
    stream_past_hot<<<t.blocks, threads_per_block, 0, stream>>>(
        t.stream, t.lookups, with_stream, t.hot, words == 0 ? t.hot_words : words, t.sums);
    CUDA_CHECK_LAUNCH();
}

// The window: the lines of [base_ptr, base_ptr + num_bytes) get hitProp, here all of
// them (hitRatio 1; with less, the rest of the window would get missProp). Reads outside the
// window stay normal. cudaStreamAttrValue and cudaKernelNodeAttrValue name this same type.
cudaLaunchAttributeValue persisting_window(void* base, std::size_t bytes) {
    cudaLaunchAttributeValue value{};
    value.accessPolicyWindow.base_ptr = base;
    value.accessPolicyWindow.num_bytes = bytes;  // at most cudaDevAttrMaxAccessPolicyWindowSize
    value.accessPolicyWindow.hitRatio = 1.0f;
    value.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    value.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    return value;
}

// Every kernel queued in `stream` from now on runs with the window; what is queued already not.
void set_stream_window(cudaStream_t stream, void* base, std::size_t bytes) {
    const cudaStreamAttrValue value = persisting_window(base, bytes);
    CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
}

// Removing the window does not end what it started: lines that persist keep persisting,
// crowding out other data, until they are reset to normal (or, some time later, by themselves).
void remove_stream_window(cudaStream_t stream) {
    cudaStreamAttrValue value{};
    value.accessPolicyWindow.num_bytes = 0;  // no window
    CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
    CUDA_CHECK(cudaCtxResetPersistingL2Cache());
}

// A graph's kernel node carries its own launch attributes. Capture the launch, find the
// kernel node, give it the window, then instantiate: the executable graph keeps it.
cudaGraph_t capture_reads(const Tables& t, cudaStream_t stream) {
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    launch_reads(t, stream);
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    return graph;
}

cudaGraphNode_t kernel_node(cudaGraph_t graph) {
    std::size_t count = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
    for (cudaGraphNode_t node : nodes) {
        cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
        CUDA_CHECK(cudaGraphNodeGetType(node, &type));
        if (type == cudaGraphNodeTypeKernel) return node;
    }
    return nullptr;
}

void set_node_window(cudaGraphNode_t node, void* base, std::size_t bytes) {
    const cudaKernelNodeAttrValue value = persisting_window(base, bytes);
    CUDA_CHECK(
        cudaGraphKernelNodeSetAttribute(node, cudaKernelNodeAttributeAccessPolicyWindow, &value));
}

cudaGraphExec_t instantiate(cudaGraph_t graph) {
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    return exec;
}

void launch_graph(cudaGraphExec_t exec, cudaStream_t stream) {
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
}

// Done: the window off and its lines back to normal, and the set-aside part of the L2 back
// to the rest of the work.
void give_back_l2(cudaStream_t stream) {
    remove_stream_window(stream);
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
}

void free_tables(Tables& t) {
    CUDA_CHECK(cudaFree(t.sums));
    CUDA_CHECK(cudaFree(t.stream));
    CUDA_CHECK(cudaFree(t.hot));
    t = Tables{};
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    int max_persisting = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, 0));
    if (max_persisting == 0) {
        std::printf("no L2 can be set aside on this device\n");
        return 0;
    }
    const int launches = 5;
    for (int w = 0; w < 2; ++w) walkthrough(0, 1);  // warm-ups: first launches, first captures
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    Found f;
    int rounds_right = 0;  // rounds in which every way's sums were right
    for (int round = 0; round < 15; ++round) {  // 15 rounds: the answer is their medians
        f = walkthrough(0, launches);
        int right = 0;
        for (int way = 0; way < ways; ++way) right += f.sums[way] == f.expected[way];
        rounds_right += right == ways;
    }
    times.print();
    std::printf("persisting L2 asked %zu, granted %zu bytes; hot table %zu, stream %zu bytes\n",
                f.set_aside, f.limit, f.hot_bytes, f.stream_bytes);
    std::printf("in %d of 15 rounds all %d ways added up to what the known values give\n",
                rounds_right, int{ways});
    // The card's number: what the lookups cost, per kernel, as a way's time above the stream
    // alone's (at least 1% of that, so that a ratio stays finite).
    const double stream_ms = times.median_ms(way_step[stream_alone]) / launches;
    const auto lookups_ms = [&](Way way) {
        return std::max(times.median_ms(way_step[way]) / launches - stream_ms, 0.01 * stream_ms);
    };
    const double table_ms = times.median_ms(way_step[table_alone]) / launches;
    std::printf("%.3gx less with the stream's window (the lookups' time above the stream alone: "
                "%.4f ms without, %.4f ms with): without a window they cost %.3gx the table "
                "alone's, with it %.3gx; the graph captured without a window: its node's "
                "window gave %.3gx\n",
                lookups_ms(no_window) / lookups_ms(stream_window), lookups_ms(no_window),
                lookups_ms(stream_window), lookups_ms(no_window) / table_ms,
                lookups_ms(stream_window) / table_ms,
                lookups_ms(graph_as_captured) / lookups_ms(graph_node_window));
    return rounds_right == 15 ? 0 : 1;
}
#endif
