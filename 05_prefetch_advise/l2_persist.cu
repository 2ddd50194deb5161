// Section l2_persist: keep a table that every thread re-reads in the L2 cache while a large buffer
// streams past it: set aside persisting L2, give a stream, then a graph's kernel node, an access
// policy window on the table. checks/l2_persist.cu times each way and checks the kernel's sums.
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace {

// Step 1. How large the L2 is, how much of it may be set aside for persisting lines (0: none on
// this device), and how many bytes one access policy window may cover; then set the part aside.
struct L2Sizes {
    int l2_bytes = 0;
    int max_persisting_bytes = 0;
    int max_window_bytes = 0;
};

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

// Step 2. The work: each thread reads the large buffer once, and for its float4 i of it the hot
// table's float4 (i / 2) % hot_n. The table is swept again and again; between two reads of one
// of its float4s, twice the table streams past and the rest of the table is read: more than the
// L2 holds, unless the table's lines persist.
__global__ void stream_past_hot(const float4* __restrict__ stream, std::size_t stream_n,
                                const float4* __restrict__ hot, std::size_t hot_n, float* sums) {
    const std::size_t first = blockIdx.x * blockDim.x + threadIdx.x;
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;  // even: 256s
    std::size_t h = (first / 2) % hot_n;  // (i / 2) % hot_n, kept without a division per float4
    const std::size_t h_step = (step / 2) % hot_n;
    float sum = 0.0f;
    for (std::size_t i = first; i < stream_n; i += step) {
        const float4 s = stream[i];
        const float4 t = hot[h];
        sum += s.x + s.y + s.z + s.w + t.x + t.y + t.z + t.w;
        h += h_step;
        if (h >= hot_n) h -= hot_n;
    }
    sums[first] = sum;  // one value per thread, so that no read is optimised away
}

struct Tables {
    float4* stream = nullptr;  // read once per kernel
    std::size_t stream_n = 0;  // float4s
    float4* hot = nullptr;     // read all through the kernel
    std::size_t hot_n = 0;
    float* sums = nullptr;  // one per thread
    int blocks = 0;
};

constexpr int threads_per_block = 256;

Tables allocate_tables(int device, std::size_t hot_bytes, std::size_t stream_bytes) {
    Tables t;
    t.hot_n = hot_bytes / sizeof(float4);
    t.stream_n = stream_bytes / sizeof(float4);
    int sms = 0;
    int threads_per_sm = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    t.blocks = sms * (threads_per_sm / threads_per_block);
    CUDA_CHECK(cudaMalloc(&t.hot, t.hot_n * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&t.stream, t.stream_n * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&t.sums, sizeof(float) * t.blocks * threads_per_block));
    return t;
}

void launch_reads(const Tables& t, cudaStream_t stream) {
    stream_past_hot<<<t.blocks, threads_per_block, 0, stream>>>(t.stream, t.stream_n, t.hot,
                                                                t.hot_n, t.sums);
    CUDA_CHECK_LAUNCH();
}

// Step 3. The window: the lines of [base_ptr, base_ptr + num_bytes) get hitProp, here all of
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

// Step 4. A graph's kernel node carries its own launch attributes. Capture the launch, find the
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

// Step 5. Done: the window off and its lines back to normal (step 3), the set-aside part of the
// L2 back to the rest of the work, and the tables freed.
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
