// Section graph_memory: allocating and freeing inside CUDA graphs, with memory nodes built node by
// node or captured from cudaMallocAsync/cudaFreeAsync (the Guide's "Graph Memory Nodes").
// Built alone, from the course's folder (mkdir -p build first), then ./build/graph_memory:
//   nvcc -std=c++17 -I. 06_vmm/graph_memory.cu common/standalone.cu -o build/graph_memory
//   (or in 06_vmm/: nvcc -std=c++17 -I.. graph_memory.cu ../common/standalone.cu
//       -o ../build/graph_memory)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

namespace {

constexpr std::uint32_t seed = 0x5eed;

// produce writes the course's pattern into scratch memory; consume turns it into 2x + 1 in `out`.
__global__ void produce(std::uint32_t* scratch, std::size_t count, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        scratch[i] = pattern(i, seed);
    }
}

__global__ void consume(const std::uint32_t* scratch, std::uint32_t* out, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        out[i] = scratch[i] * 2 + 1;
    }
}

// Values of `out` that are not what consume makes of produce's pattern.
std::size_t wrong_in(const std::uint32_t* out, std::size_t count) {
    return mismatches_on_device(out, count, seed, {2, 1});
}

cudaGraphExec_t instantiate(cudaGraph_t graph, unsigned long long flags = 0) {
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, flags));
    return exec;
}

void destroy(cudaGraphExec_t exec, cudaGraph_t graph) {
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
}

// What the graph allocator holds: memory its graphs use now, and memory it has mapped for them.
struct Books {
    std::uint64_t used = 0, reserved = 0;
};

Books books(int device) {
    Books b;
    CUDA_CHECK(cudaDeviceGetGraphMemAttribute(device, cudaGraphMemAttrUsedMemCurrent, &b.used));
    CUDA_CHECK(
        cudaDeviceGetGraphMemAttribute(device, cudaGraphMemAttrReservedMemCurrent, &b.reserved));
    return b;
}

// Two allocations in one graph whose lifetimes do not overlap (A is freed before B is allocated)
// may share physical memory: the allocator's high-water mark says whether they did.
struct Sharing {
    std::uint64_t reserved_high = 0;
    std::size_t wrong = 0;
};

// The stream work after the graph uses the allocation and frees it; until then the graph
// cannot be launched again. Or the graph frees it itself: instantiated with
// cudaGraphInstantiateFlagAutoFreeOnLaunch, each launch first frees what the last launch left,
// and allocates at the same address.
struct Unfreed {
    std::size_t wrong = 0;                      // consume, in the stream after the graph
    cudaError_t after_free = cudaErrorUnknown;  // a second launch once it was freed
    cudaError_t relaunch[2] = {cudaErrorUnknown, cudaErrorUnknown};  // auto-free, no free between
    Books after_one, after_two;        // the books after each relaunch
    std::size_t wrong_relaunched = 0;  // what consume read at the same address
};

// The graphs of steps 1 to 5; their code follows the walkthrough.
cudaGraph_t build_graph(int device, std::uint32_t* out, std::size_t count);  // node by node
cudaGraph_t capture_graph(cudaStream_t stream, std::uint32_t* out, std::size_t count);
Sharing two_lifetimes(int device, cudaStream_t stream, std::uint32_t* out, std::size_t count);
Unfreed left_unfreed(int device, cudaStream_t stream, std::uint32_t* out, std::size_t count);
void same_step_three_ways(cudaStream_t stream, std::uint32_t* out, std::size_t count, int steps);

// What the walkthrough found.
struct Found {
    Books before, instantiated, launched, destroyed, trimmed;  // step 1
    std::size_t built_wrong = 0, captured_wrong = 0, steps_wrong = 0;
    Sharing sharing;
    Unfreed unfreed;
};

// The walkthrough's steps, the same step three ways (5.): phases of the story, each one timed
// wherever steps are watched.
constexpr tutorial::Step as_graph{"each step one launch of the captured graph"};
constexpr tutorial::Step in_stream{"each step cudaMallocAsync / cudaFreeAsync in a stream"};
constexpr tutorial::Step with_malloc{"each step cudaMalloc / cudaFree around the kernels"};

Found walkthrough(int device, std::size_t count, int steps) {
    Found f;
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::uint32_t* out = nullptr;
    CUDA_CHECK(cudaMalloc(&out, count * sizeof *out));

    // 1. Built node by node. Instantiating maps no memory for the graph; its first launch does
    //    (the Guide's "First Launch / cudaGraphUpload"); after the free node has run the memory
    //    stays with the graph allocator, for the next launch, even once the graph is destroyed.
    //    Only a trim gives it back to the device.
    CUDA_CHECK(cudaDeviceGraphMemTrim(device));  // start from an empty graph allocator
    f.before = books(device);
    cudaGraph_t graph = build_graph(device, out, count);
    cudaGraphExec_t exec = instantiate(graph);
    f.instantiated = books(device);
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    f.launched = books(device);
    f.built_wrong = wrong_in(out, count);
    destroy(exec, graph);
    f.destroyed = books(device);
    CUDA_CHECK(cudaDeviceGraphMemTrim(device));
    f.trimmed = books(device);

    // 2. The same, captured from a stream.
    CUDA_CHECK(cudaMemsetAsync(out, 0, count * sizeof *out, stream));  // in the stream's order
    graph = capture_graph(stream, out, count);
    exec = instantiate(graph);
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    f.captured_wrong = wrong_in(out, count);
    destroy(exec, graph);

    // 3. Two allocations one after the other; 4. an allocation the graph leaves unfreed.
    f.sharing = two_lifetimes(device, stream, out, count);
    f.unfreed = left_unfreed(device, stream, out, count);
    CUDA_CHECK(cudaDeviceGraphMemTrim(device));

    // 5. What a graph's allocation costs: the same step three ways, on 1 MiB of scratch. The
    //    steps are timed on the host, so the stream must be idle when the first one starts:
    //    work still queued (a memset of all of `out`) would be counted as the graph's.
    const std::size_t step_count = std::min<std::size_t>(count, std::size_t{1} << 18);
    CUDA_CHECK(cudaMemsetAsync(out, 0, step_count * sizeof *out, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    same_step_three_ways(stream, out, step_count, steps);
    f.steps_wrong = wrong_in(out, step_count);
    CUDA_CHECK(cudaDeviceGraphMemTrim(device));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return f;
}

// Node by node: allocate scratch memory, produce into it, consume it into `out`, free it.
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

// The same graph, captured from a stream that allocates and frees in stream order.
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

// 3. Two allocations in one graph, A freed before B is allocated (Sharing says why).
Sharing two_lifetimes(int device, cudaStream_t stream, std::uint32_t* out, std::size_t count) {
    std::uint64_t zero = 0;  // a high-water mark can only be reset, to 0
    CUDA_CHECK(cudaDeviceSetGraphMemAttribute(device, cudaGraphMemAttrReservedMemHigh, &zero));
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    std::uint32_t *a = nullptr, *b = nullptr;
    CUDA_CHECK(cudaMallocAsync(&a, count * sizeof *a, stream));
    produce<<<256, 256, 0, stream>>>(a, count, seed);
    consume<<<256, 256, 0, stream>>>(a, out, count);
    CUDA_CHECK(cudaFreeAsync(a, stream));
    CUDA_CHECK(cudaMallocAsync(&b, count * sizeof *b, stream));  // after A is freed
    produce<<<256, 256, 0, stream>>>(b, count, seed);
    consume<<<256, 256, 0, stream>>>(b, out, count);  // out = the same values again
    CUDA_CHECK(cudaFreeAsync(b, stream));
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec = instantiate(graph);
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    Sharing s;
    CUDA_CHECK(
        cudaDeviceGetGraphMemAttribute(device, cudaGraphMemAttrReservedMemHigh, &s.reserved_high));
    s.wrong = wrong_in(out, count);
    destroy(exec, graph);
    return s;
}

// A graph that allocates and does not free: its allocation outlives the launch.
std::uint32_t* capture_unfreed(cudaStream_t stream, std::size_t count, cudaGraph_t* graph) {
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    std::uint32_t* result = nullptr;
    CUDA_CHECK(cudaMallocAsync(&result, count * sizeof(std::uint32_t), stream));
    produce<<<256, 256, 0, stream>>>(result, count, seed);
    CUDA_CHECK(cudaStreamEndCapture(stream, graph));
    return result;
}

// 4. The graph whose allocation outlives its launch, used after it and relaunched (Unfreed
//    says how).
Unfreed left_unfreed(int device, cudaStream_t stream, std::uint32_t* out, std::size_t count) {
    Unfreed u;
    cudaGraph_t graph = nullptr;
    std::uint32_t* result = capture_unfreed(stream, count, &graph);
    cudaGraphExec_t exec = instantiate(graph);
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    consume<<<256, 256, 0, stream>>>(result, out, count);  // stream work after the graph
    CUDA_CHECK(cudaFreeAsync(result, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    u.wrong = wrong_in(out, count);
    u.after_free = cudaGraphLaunch(exec, stream);  // allowed again: the allocation was freed
    CUDA_CHECK(cudaFreeAsync(result, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaGraphExecDestroy(exec));

    exec = instantiate(graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    for (int i = 0; i < 2; ++i) {
        CUDA_CHECK(cudaMemsetAsync(result, 0, count * sizeof *result, stream));  // wiped
        u.relaunch[i] = cudaGraphLaunch(exec, stream);  // no free in between
        CUDA_CHECK(cudaStreamSynchronize(stream));
        (i == 0 ? u.after_one : u.after_two) = books(device);
    }
    consume<<<256, 256, 0, stream>>>(result, out, count);
    CUDA_CHECK(cudaFreeAsync(result, stream));  // the last launch's allocation
    CUDA_CHECK(cudaStreamSynchronize(stream));
    u.wrong_relaunched = wrong_in(out, count);
    destroy(exec, graph);
    return u;
}

// The same step (allocate scratch, produce, consume, free) `steps` times in a row, three ways, each
// a named step that ends once the stream is done.
void same_step_three_ways(cudaStream_t stream, std::uint32_t* out, std::size_t count, int steps) {
    cudaGraph_t graph = capture_graph(stream, out, count);
    cudaGraphExec_t exec = instantiate(graph);
    {
        const tutorial::During during(as_graph, stream);
        for (int s = 0; s < steps; ++s) CUDA_CHECK(cudaGraphLaunch(exec, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    {
        const tutorial::During during(in_stream, stream);
        for (int s = 0; s < steps; ++s) {
            std::uint32_t* scratch = nullptr;
            CUDA_CHECK(cudaMallocAsync(&scratch, count * sizeof *scratch, stream));
            produce<<<256, 256, 0, stream>>>(scratch, count, seed);
            consume<<<256, 256, 0, stream>>>(scratch, out, count);
            CUDA_CHECK(cudaFreeAsync(scratch, stream));
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    {
        const tutorial::During during(with_malloc, stream);
        for (int s = 0; s < steps; ++s) {
            std::uint32_t* scratch = nullptr;
            CUDA_CHECK(cudaMalloc(&scratch, count * sizeof *scratch));
            produce<<<256, 256, 0, stream>>>(scratch, count, seed);
            consume<<<256, 256, 0, stream>>>(scratch, out, count);
            CUDA_CHECK(cudaFree(scratch));
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    destroy(exec, graph);
}

// The mistakes, each of which the reference forbids; every call returns its answer. A graph whose
// allocation is still live, launched again without the auto-free flag, and instantiated a second
// time; and one allocation given a second free node.
struct Misuse {
    cudaError_t relaunch, second_instance, second_free;
};

Misuse forbidden_calls(int device, cudaStream_t stream) {
    const std::size_t count = 1 << 20;
    Misuse m{};
    cudaGraph_t unfreed = nullptr;
    std::uint32_t* result = capture_unfreed(stream, count, &unfreed);
    cudaGraphExec_t exec = instantiate(unfreed), second = nullptr;
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    m.relaunch = cudaGraphLaunch(exec, stream);
    m.second_instance = cudaGraphInstantiate(&second, unfreed, 0);
    (void)cudaGetLastError();  // the refusals are reported; what follows is not affected
    CUDA_CHECK(cudaFreeAsync(result, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    destroy(exec, unfreed);

    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaGraphCreate(&graph, 0));
    cudaMemAllocNodeParams alloc{};
    alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    alloc.poolProps.location = {cudaMemLocationTypeDevice, device};
    alloc.bytesize = count * sizeof(std::uint32_t);
    cudaGraphNode_t allocated, freed, freed_again;
    CUDA_CHECK(cudaGraphAddMemAllocNode(&allocated, graph, nullptr, 0, &alloc));
    CUDA_CHECK(cudaGraphAddMemFreeNode(&freed, graph, &allocated, 1, alloc.dptr));
    m.second_free = cudaGraphAddMemFreeNode(&freed_again, graph, &freed, 1, alloc.dptr);
    (void)cudaGetLastError();
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaDeviceGraphMemTrim(device));
    return m;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
// ./graph_memory runs the walkthrough; ./graph_memory forbidden makes the forbidden calls.
int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "forbidden") {
        cudaStream_t stream = nullptr;
        CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        const Misuse m = forbidden_calls(0, stream);
        std::printf(
            "relaunch with the allocation live: %s; a second instantiation: %s; a second "
            "free node: %s\n",
            cudaGetErrorName(m.relaunch), cudaGetErrorName(m.second_instance),
            cudaGetErrorName(m.second_free));
        return 0;
    }
    const std::size_t bytes = std::size_t{256} << 20;
    const int steps = 200;
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found f = walkthrough(0, bytes / sizeof(std::uint32_t), steps);
    times.print();
    // The card's answer: the graph allocator's books, and one step's cost each way (host time of
    // the steps in a row, per step).
    const auto us = [&](const tutorial::Step& way) {
        return times.median_host_ms(way) * 1e3 / steps;
    };
    std::printf(
        "%llu MiB reserved at the first launch, %llu MiB at instantiation; with the graph "
        "destroyed %llu MiB, after cudaDeviceGraphMemTrim %llu MiB; a step cost %.1f us "
        "as a graph launch, %.1f us with cudaMalloc and cudaFree (%.1fx)\n",
        static_cast<unsigned long long>(f.launched.reserved >> 20),
        static_cast<unsigned long long>(f.instantiated.reserved >> 20),
        static_cast<unsigned long long>(f.destroyed.reserved >> 20),
        static_cast<unsigned long long>(f.trimmed.reserved >> 20), us(as_graph), us(with_malloc),
        us(with_malloc) / us(as_graph));
    std::printf(
        "graph allocator reserved %llu bytes before, %llu instantiated, %llu launched, "
        "%llu destroyed, %llu trimmed; %zu + %zu values wrong; unfreed, relaunched with "
        "auto-free: %s\n",
        static_cast<unsigned long long>(f.before.reserved),
        static_cast<unsigned long long>(f.instantiated.reserved),
        static_cast<unsigned long long>(f.launched.reserved),
        static_cast<unsigned long long>(f.destroyed.reserved),
        static_cast<unsigned long long>(f.trimmed.reserved), f.built_wrong, f.captured_wrong,
        cudaGetErrorName(f.unfreed.relaunch[0]));
    return f.built_wrong == 0 && f.captured_wrong == 0 ? 0 : 1;
}
#endif
