// Section graph_memory: allocating and freeing inside CUDA graphs, with memory nodes built node by
// node or captured from cudaMallocAsync/cudaFreeAsync (the Programming Guide's CUDA Graphs chapter,
// "Graph Memory Nodes"). (checks/graph_memory.cu follows the graph allocator's books and checks.)
#include "common/check.hpp"

#include <cstddef>
#include <cstdint>

namespace {

constexpr std::uint32_t seed = 0x5eed;

__global__ void produce(std::uint32_t* scratch, std::size_t count, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        scratch[i] = static_cast<std::uint32_t>(i) ^ seed;
    }
}

__global__ void consume(const std::uint32_t* scratch, std::uint32_t* out, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        out[i] = scratch[i] * 2 + 1;
    }
}

// Step 1. Node by node: allocate scratch memory, produce into it, consume it into `out`, free it.
cudaGraph_t build_graph(int device, std::uint32_t* out, std::size_t count) {
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaGraphCreate(&graph, 0));
    cudaMemAllocNodeParams alloc{};
    alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    alloc.poolProps.location = {cudaMemLocationTypeDevice, device};
    alloc.bytesize = count * sizeof(std::uint32_t);
    cudaGraphNode_t allocated, produced, consumed, freed;
    CUDA_CHECK(cudaGraphAddMemAllocNode(&allocated, graph, nullptr, 0, &alloc));
    auto* scratch = static_cast<std::uint32_t*>(alloc.dptr);  // fixed for every launch
    std::uint32_t produce_seed = seed;
    void* produce_args[] = {&scratch, &count, &produce_seed};
    void* consume_args[] = {&scratch, &out, &count};
    cudaKernelNodeParams kernel{
        reinterpret_cast<void*>(produce), dim3(256), dim3(256), 0, produce_args, nullptr};
    CUDA_CHECK(cudaGraphAddKernelNode(&produced, graph, &allocated, 1, &kernel));
    kernel.func = reinterpret_cast<void*>(consume);
    kernel.kernelParams = consume_args;
    CUDA_CHECK(cudaGraphAddKernelNode(&consumed, graph, &produced, 1, &kernel));
    CUDA_CHECK(cudaGraphAddMemFreeNode(&freed, graph, &consumed, 1, alloc.dptr));
    return graph;
}

// Step 2. The same graph, captured from a stream that allocates and frees in stream order.
cudaGraph_t capture_graph(cudaStream_t stream, std::uint32_t* out, std::size_t count) {
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    std::uint32_t* scratch = nullptr;
    CUDA_CHECK(cudaMallocAsync(&scratch, count * sizeof(std::uint32_t), stream));
    produce<<<256, 256, 0, stream>>>(scratch, count, seed);
    consume<<<256, 256, 0, stream>>>(scratch, out, count);
    CUDA_CHECK(cudaFreeAsync(scratch, stream));
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    return graph;
}

// Step 3. Instantiate, then launch. Instantiating maps no memory for the graph; its first launch
// does (the Guide's "First Launch / cudaGraphUpload"). After the free node has run the memory
// stays with the graph allocator, for the next launch, even once the graph is destroyed.
cudaGraphExec_t instantiate(cudaGraph_t graph, unsigned long long flags = 0) {
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, flags));
    return exec;
}

void launch(cudaGraphExec_t exec, cudaStream_t stream) {
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

// What the graph allocator holds: cudaGraphMemAttrUsedMemCurrent, ReservedMemCurrent, ...
std::uint64_t graph_memory(int device, cudaGraphMemAttributeType which) {
    std::uint64_t value = 0;
    CUDA_CHECK(cudaDeviceGetGraphMemAttribute(device, which, &value));
    return value;
}

// Step 4. Only a trim gives the graph allocator's unused memory back to the device.
void trim(int device) {
    CUDA_CHECK(cudaDeviceGraphMemTrim(device));
}

// Step 5. An allocation the graph does not free: it outlives the launch, for the stream work after
// it, until something frees it (cudaFreeAsync here). Returns the allocation's address.
std::uint32_t* capture_unfreed(cudaStream_t stream, std::size_t count, cudaGraph_t* graph) {
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    std::uint32_t* result = nullptr;
    CUDA_CHECK(cudaMallocAsync(&result, count * sizeof(std::uint32_t), stream));
    produce<<<256, 256, 0, stream>>>(result, count, seed);
    CUDA_CHECK(cudaStreamEndCapture(stream, graph));
    return result;
}

// Step 6. Launch it, use its allocation in the stream after the graph, and free it there: until
// the allocation is freed, the graph cannot be launched again.
void launch_use_free(cudaGraphExec_t exec, cudaStream_t stream, std::uint32_t* result,
                     std::uint32_t* out, std::size_t count) {
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    consume<<<256, 256, 0, stream>>>(result, out, count);  // stream work after the graph
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaFreeAsync(result, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Step 7. Or let the graph free it: instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch,
// each launch first frees what the last launch left allocated, and allocates at the same address.
cudaGraphExec_t instantiate_auto_free(cudaGraph_t graph) {
    return instantiate(graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);
}

}  // namespace
