// Section `graph_memory`: allocating and freeing inside CUDA graphs. A graph can hold memory
// nodes: an allocation node hands the nodes after it a buffer, a free node gives it back. The
// same graph can be built node by node or captured from a stream that calls cudaMallocAsync and
// cudaFreeAsync. The graph's memory comes from an allocator of its own, which keeps it between
// launches (the Programming Guide's CUDA Graphs chapter, "Graph Memory Nodes").
#include "common/check.hpp"
#include "common/child.hpp"
#include "common/device.hpp"
#include "common/report.hpp"
#include "common/timing.hpp"
#include "sections.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

using tutorial::format;
using tutorial::format_bytes;

namespace {

constexpr std::uint32_t seed = 0x5eed;

// lesson:begin
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

// 1. Node by node: allocate scratch memory, produce into it, consume it into `out`, free it.
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
    cudaKernelNodeParams kernel{reinterpret_cast<void*>(produce), dim3(256), dim3(256), 0,
                                produce_args, nullptr};
    CUDA_CHECK(cudaGraphAddKernelNode(&produced, graph, &allocated, 1, &kernel));
    kernel.func = reinterpret_cast<void*>(consume);
    kernel.kernelParams = consume_args;
    CUDA_CHECK(cudaGraphAddKernelNode(&consumed, graph, &produced, 1, &kernel));
    CUDA_CHECK(cudaGraphAddMemFreeNode(&freed, graph, &consumed, 1, alloc.dptr));
    return graph;
}

// 2. The same graph, captured from a stream that allocates and frees in stream order.
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

// 3. An allocation the graph does not free: it outlives the launch, for the stream work after it,
// until something frees it (cudaFreeAsync here). Returns the allocation's address.
std::uint32_t* capture_unfreed(cudaStream_t stream, std::size_t count, cudaGraph_t* graph) {
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    std::uint32_t* result = nullptr;
    CUDA_CHECK(cudaMallocAsync(&result, count * sizeof(std::uint32_t), stream));
    produce<<<256, 256, 0, stream>>>(result, count, seed);
    CUDA_CHECK(cudaStreamEndCapture(stream, graph));
    return result;
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

// Values of `out` that are not what consume writes from produce's pattern.
std::size_t wrong_values(const std::uint32_t* out, std::size_t count) {
    std::vector<std::uint32_t> host(count);
    CUDA_CHECK(cudaMemcpy(host.data(), out, count * sizeof *out, cudaMemcpyDeviceToHost));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) {
        wrong += host[i] != (static_cast<std::uint32_t>(i) ^ seed) * 2 + 1;
    }
    return wrong;
}

std::uint64_t graph_attribute(int device, cudaGraphMemAttributeType which) {
    std::uint64_t value = 0;
    CUDA_CHECK(cudaDeviceGetGraphMemAttribute(device, which, &value));
    return value;
}

void reset_high_watermarks(int device) {
    std::uint64_t zero = 0;
    CUDA_CHECK(cudaDeviceSetGraphMemAttribute(device, cudaGraphMemAttrUsedMemHigh, &zero));
    CUDA_CHECK(cudaDeviceSetGraphMemAttribute(device, cudaGraphMemAttrReservedMemHigh, &zero));
}

cudaGraphExec_t instantiate(cudaGraph_t graph, unsigned long long flags = 0) {
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, flags));
    return exec;
}

// The graph allocator's books and the device's free memory after one step.
struct Snapshot {
    std::string step;
    std::uint64_t used, reserved;
    std::size_t free_bytes;
};

Snapshot snapshot(int device, std::string step) {
    return {std::move(step), graph_attribute(device, cudaGraphMemAttrUsedMemCurrent),
            graph_attribute(device, cudaGraphMemAttrReservedMemCurrent),
            tutorial::free_device_memory()};
}

struct TwoWays {
    std::size_t built_wrong = 0, captured_wrong = 0;
    std::vector<Snapshot> steps;
};

// Claims 1 and 2: both graphs run and give consume's result; the memory stays with the graph
// allocator after the launch, until cudaDeviceGraphMemTrim.
TwoWays two_ways(int device, cudaStream_t stream, std::uint32_t* out, std::size_t count) {
    TwoWays r;
    CUDA_CHECK(cudaDeviceGraphMemTrim(device));  // start from an empty graph allocator
    r.steps.push_back(snapshot(device, "before"));
    cudaGraph_t built = build_graph(device, out, count);
    cudaGraphExec_t built_exec = instantiate(built);
    r.steps.push_back(snapshot(device, "built and instantiated"));
    CUDA_CHECK(cudaMemsetAsync(out, 0, count * sizeof *out, stream));
    CUDA_CHECK(cudaGraphLaunch(built_exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    r.built_wrong = wrong_values(out, count);
    r.steps.push_back(snapshot(device, "launched, synchronized"));
    CUDA_CHECK(cudaGraphExecDestroy(built_exec));
    CUDA_CHECK(cudaGraphDestroy(built));
    r.steps.push_back(snapshot(device, "graph destroyed"));
    CUDA_CHECK(cudaDeviceGraphMemTrim(device));
    r.steps.push_back(snapshot(device, "cudaDeviceGraphMemTrim"));

    cudaGraph_t captured = capture_graph(stream, out, count);
    cudaGraphExec_t captured_exec = instantiate(captured);
    CUDA_CHECK(cudaMemsetAsync(out, 0, count * sizeof *out, stream));
    CUDA_CHECK(cudaGraphLaunch(captured_exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    r.captured_wrong = wrong_values(out, count);
    CUDA_CHECK(cudaGraphExecDestroy(captured_exec));
    CUDA_CHECK(cudaGraphDestroy(captured));
    CUDA_CHECK(cudaDeviceGraphMemTrim(device));
    return r;
}

// Claim 3: two allocations in one graph whose lifetimes do not overlap (A is freed before B is
// allocated) may share physical memory. Returns the graph allocator's reserved high watermark.
struct Sharing {
    std::uint64_t reserved_high = 0;
    void* a = nullptr;
    void* b = nullptr;
    std::size_t wrong = 0;
};

Sharing one_after_the_other(int device, cudaStream_t stream, std::uint32_t* out,
                            std::size_t count) {
    CUDA_CHECK(cudaDeviceGraphMemTrim(device));
    reset_high_watermarks(device);
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    std::uint32_t* a = nullptr;
    std::uint32_t* b = nullptr;
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
    Sharing s{graph_attribute(device, cudaGraphMemAttrReservedMemHigh), a, b,
              wrong_values(out, count)};
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaDeviceGraphMemTrim(device));
    return s;
}

// Claim 4: an allocation the graph leaves unfreed is usable after the launch, by work in the
// stream, and must be freed before the graph can run again: with cudaFreeAsync, or by the
// relaunch itself where the graph was instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch.
// Then the new launch's allocation is at the same address (the old contents are zeroed in
// between, so only the new launch's writes can pass the check).
struct Unfreed {
    std::size_t wrong_after = 0;                   // consume, in the stream after the graph
    cudaError_t after_free = cudaErrorUnknown;     // a second launch once cudaFreeAsync has run
    cudaError_t auto_relaunch = cudaErrorUnknown;  // with the flag, no free in between
    std::size_t wrong_relaunch = 0;                // what consume read at the same address
};

Unfreed outside_the_graph(cudaStream_t stream, std::uint32_t* out, std::size_t count) {
    Unfreed u;
    const std::size_t bytes = count * sizeof(std::uint32_t);
    cudaGraph_t graph = nullptr;
    std::uint32_t* result = capture_unfreed(stream, count, &graph);
    cudaGraphExec_t exec = instantiate(graph);
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    consume<<<256, 256, 0, stream>>>(result, out, count);  // stream work after the graph
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    u.wrong_after = wrong_values(out, count);
    CUDA_CHECK(cudaFreeAsync(result, stream));
    u.after_free = cudaGraphLaunch(exec, stream);
    CUDA_CHECK(cudaFreeAsync(result, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaGraphExecDestroy(exec));

    cudaGraphExec_t auto_exec = instantiate(graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);
    CUDA_CHECK(cudaGraphLaunch(auto_exec, stream));
    CUDA_CHECK(cudaMemsetAsync(result, 0, bytes, stream));  // this launch's data, wiped
    u.auto_relaunch = cudaGraphLaunch(auto_exec, stream);   // no free in between
    consume<<<256, 256, 0, stream>>>(result, out, count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaFreeAsync(result, stream));  // the last launch's allocation
    CUDA_CHECK(cudaStreamSynchronize(stream));
    u.wrong_relaunch = wrong_values(out, count);
    CUDA_CHECK(cudaGraphExecDestroy(auto_exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    return u;
}

// Claim 5: the same step (allocate scratch, produce, consume, free) `steps` times, three ways;
// milliseconds per step, host timer until the stream is done. Medians of interleaved rounds.
enum Way { graph_launch, stream_ordered, malloc_free, ways };
const char* const way_names[ways] = {"cudaGraphLaunch of the captured step",
                                     "cudaMallocAsync / cudaFreeAsync in a stream",
                                     "cudaMalloc / cudaFree around the kernels"};

std::vector<tutorial::Spread> time_steps(cudaStream_t stream, std::uint32_t* out,
                                         std::size_t count, int steps, int rounds) {
    cudaGraph_t graph = capture_graph(stream, out, count);
    cudaGraphExec_t exec = instantiate(graph);
    const auto one_way = [&](std::size_t way) {
        tutorial::HostTimer timer;
        for (int s = 0; s < steps; ++s) {
            if (way == graph_launch) {
                CUDA_CHECK(cudaGraphLaunch(exec, stream));
                continue;
            }
            std::uint32_t* scratch = nullptr;
            if (way == stream_ordered) {
                CUDA_CHECK(cudaMallocAsync(&scratch, count * sizeof *scratch, stream));
            } else {
                CUDA_CHECK(cudaMalloc(&scratch, count * sizeof *scratch));
            }
            produce<<<256, 256, 0, stream>>>(scratch, count, seed);
            consume<<<256, 256, 0, stream>>>(scratch, out, count);
            if (way == stream_ordered) {
                CUDA_CHECK(cudaFreeAsync(scratch, stream));
            } else {
                CUDA_CHECK(cudaFree(scratch));
            }
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
        return timer.elapsed_ms() / steps;
    };
    const std::vector<tutorial::Spread> ms = tutorial::interleaved_ms(ways, 1, rounds, one_way);
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    return ms;
}

}  // namespace

// Child role `graph_memory_misuse` (args: device): what the documentation forbids, one line per
// call; exit 0 when each was refused.
int child_graph_memory_misuse(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const std::size_t count = 1 << 20;
    int refused = 0;
    const auto line = [&](const char* what, cudaError_t got) {
        refused += got != cudaSuccess;
        std::printf("%-58s -> %s\n", what, cudaGetErrorName(got));
        (void)cudaGetLastError();
    };

    // A graph whose allocation is still live, launched again without the auto-free flag.
    cudaGraph_t unfreed = nullptr;
    std::uint32_t* result = capture_unfreed(stream, count, &unfreed);
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, unfreed, 0));
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    line("cudaGraphLaunch again, its allocation not yet freed", cudaGraphLaunch(exec, stream));
    // A second executable graph of a graph with memory nodes, while the first exists.
    cudaGraphExec_t second = nullptr;
    line("cudaGraphInstantiate of it a second time",
         cudaGraphInstantiate(&second, unfreed, 0));
    CUDA_CHECK(cudaFreeAsync(result, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(unfreed));

    // The same allocation freed twice in its graph.
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaGraphCreate(&graph, 0));
    cudaMemAllocNodeParams alloc{};
    alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    alloc.poolProps.location = {cudaMemLocationTypeDevice, device};
    alloc.bytesize = count * sizeof(std::uint32_t);
    cudaGraphNode_t allocated, freed, freed_again;
    CUDA_CHECK(cudaGraphAddMemAllocNode(&allocated, graph, nullptr, 0, &alloc));
    CUDA_CHECK(cudaGraphAddMemFreeNode(&freed, graph, &allocated, 1, alloc.dptr));
    line("cudaGraphAddMemFreeNode for an allocation already freed",
         cudaGraphAddMemFreeNode(&freed_again, graph, &freed, 1, alloc.dptr));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaDeviceGraphMemTrim(device));
    return refused == 3 ? 0 : 3;
}

namespace {

void print_steps(const std::vector<Snapshot>& steps) {
    tutorial::Table table({{"step"},
                           {"graph used", tutorial::Align::right},
                           {"graph reserved", tutorial::Align::right},
                           {"device free", tutorial::Align::right}});
    for (const Snapshot& s : steps) {
        table.add_row({s.step, format_bytes(s.used), format_bytes(s.reserved),
                       format_bytes(s.free_bytes)});
    }
    table.print();
}

// Device memory taken between two snapshots (negative: given back), in bytes.
double taken(const Snapshot& from, const Snapshot& to) {
    return static_cast<double>(from.free_bytes) - static_cast<double>(to.free_bytes);
}

void claim_memory(tutorial::Context& ctx, const TwoWays& w, std::size_t bytes) {
    const Snapshot& before = w.steps[0];
    const Snapshot& launched = w.steps[2];
    const Snapshot& destroyed = w.steps[3];
    const Snapshot& trimmed = w.steps[4];
    const double size = static_cast<double>(bytes);
    ctx.claim(tutorial::observed(
        "after the graph ran and freed its allocation, the memory stays with the graph allocator",
        launched.reserved >= bytes && destroyed.reserved >= bytes && taken(before, launched) > size / 2,
        format("reserved %s after the launch, %s with the graph destroyed; device free memory "
               "%s lower than before",
               format_bytes(launched.reserved).c_str(), format_bytes(destroyed.reserved).c_str(),
               format_bytes(static_cast<std::size_t>(std::max(0.0, taken(before, launched))))
                   .c_str()),
        "the driver returned the memory at the free node or at the synchronize"));
    ctx.claim(tutorial::observed(
        "cudaDeviceGraphMemTrim gives it back to the device",
        trimmed.reserved < bytes && taken(destroyed, trimmed) < -size / 2,
        format("reserved %s after the trim; device free memory %s higher",
               format_bytes(trimmed.reserved).c_str(),
               format_bytes(static_cast<std::size_t>(std::max(0.0, -taken(destroyed, trimmed))))
                   .c_str()),
        "memory another program allocated meanwhile, or a graph still scheduled to run"));
}

struct Results {
    const TwoWays& w;
    const Sharing& s;
    const Unfreed& u;
    const std::vector<tutorial::Spread>& ms;
    const tutorial::ChildResult& child;
};

void print_steps_table(const std::vector<tutorial::Spread>& ms, std::size_t step_count, int steps,
                       int rounds) {
    std::printf("\nThe step on %s, %d times in a row, median of %d rounds (us per step):\n\n",
                format_bytes(step_count * 4).c_str(), steps, rounds);
    tutorial::Table table({{"way"},
                           {"us per step", tutorial::Align::right},
                           {"fastest..slowest round", tutorial::Align::right}});
    for (int way = 0; way < ways; ++way) {
        table.add_row({way_names[way], format("%.1f", 1e3 * ms[way].median),
                       format("%.1f..%.1f", 1e3 * ms[way].low, 1e3 * ms[way].high)});
    }
    table.print();

}

void claim_lessons(tutorial::Context& ctx, const Results& r, std::size_t bytes) {
    const TwoWays& w = r.w;
    const Sharing& s = r.s;
    const Unfreed& u = r.u;
    const std::vector<tutorial::Spread>& ms = r.ms;
    const tutorial::ChildResult& child = r.child;
    ctx.claim(tutorial::observed(
        "a graph built with memory nodes and one captured from cudaMallocAsync/cudaFreeAsync "
        "both give the kernel's result",
        w.built_wrong == 0 && w.captured_wrong == 0,
        format("%zu and %zu values wrong", w.built_wrong, w.captured_wrong),
        "a kernel node ran before the allocation node or after the free node"));
    claim_memory(ctx, w, bytes);
    // A ratio of bytes, not of times: judged in every run, compute-sanitizer's included.
    tutorial::Claim shared = tutorial::at_most(
        "two allocations whose lifetimes do not overlap share physical memory (reserved high "
        "watermark / the two together)",
        static_cast<double>(s.reserved_high) / (2.0 * static_cast<double>(bytes)), 0.75, "x",
        "the graph allocator gave each allocation its own memory");
    shared.evidence = tutorial::Evidence::behaviour;
    ctx.claim(shared);
    ctx.claim(tutorial::observed(
        "an allocation a graph leaves unfreed is used after the launch and freed with "
        "cudaFreeAsync, and the graph can run again",
        u.wrong_after == 0 && u.after_free == cudaSuccess,
        format("%zu wrong; the launch after the free: %s", u.wrong_after,
               cudaGetErrorName(u.after_free)),
        "the free did not reach the graph allocator before the second launch"));
    ctx.claim(tutorial::observed(
        "with cudaGraphInstantiateFlagAutoFreeOnLaunch a relaunch frees it first, and allocates "
        "at the same address",
        u.auto_relaunch == cudaSuccess && u.wrong_relaunch == 0,
        format("second launch %s, %zu wrong at the address", cudaGetErrorName(u.auto_relaunch),
               u.wrong_relaunch),
        "the flag was not honoured, or the allocation moved"));
    ctx.claim(tutorial::at_least(
        "a step with cudaMalloc/cudaFree costs more than the graph's allocation and free",
        ms[malloc_free].median / ms[graph_launch].median, 1.5, "x",
        "the kernels dominate the step: try a smaller buffer"));
    ctx.claim(tutorial::at_least(
        "...and the graph launch is no slower than the same step in a stream with "
        "cudaMallocAsync (the stream's time / the graph's)",
        ms[stream_ordered].median / ms[graph_launch].median, 0.8, "x",
        "the graph launch costs more than the separate calls here"));
    ctx.claim(tutorial::observed(
        "relaunching a graph whose allocation is still live, a second instantiation, a second "
        "free node: each refused",
        child.succeeded(), "the child " + child.describe(),
        "this driver allowed one of them: the child's lines say which"));
}

}  // namespace

tutorial::Result run_graph_memory(tutorial::Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported) != 1) {
        return ctx.skip("memoryPoolsSupported = 0: no stream-ordered or graph allocations here");
    }
    const std::size_t bytes = ctx.size_or(tutorial::fit_in_free_memory(
        ctx.quick() ? (std::size_t{64} << 20) : (std::size_t{256} << 20), 0.2, 2 << 20));
    const std::size_t count = bytes / sizeof(std::uint32_t);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::uint32_t* out = nullptr;
    CUDA_CHECK(cudaMalloc(&out, bytes));

    std::printf(
        "Scratch memory of %s: allocated, filled by `produce`, read by `consume` into `out`,\n"
        "freed. The graph allocator's books (cudaDeviceGetGraphMemAttribute) and the device's\n"
        "free memory (cudaMemGetInfo) after each step:\n\n",
        format_bytes(bytes).c_str());
    const TwoWays w = two_ways(ctx.device, stream, out, count);
    print_steps(w.steps);
    std::printf(
        "\nThe graph freed its allocation (its free node ran), yet the graph allocator still\n"
        "counts the memory as used by graphs (%s) and keeps it reserved, the graph destroyed or\n"
        "not, until cudaDeviceGraphMemTrim; the instantiation took nothing, the first launch\n"
        "did (both observed on %s).\n",
        format_bytes(w.steps[3].used).c_str(), tutorial::this_driver().c_str());
    std::printf(
        "\nBuilt node by node: %zu values wrong; captured from the stream: %zu values wrong.\n",
        w.built_wrong, w.captured_wrong);

    const Sharing s = one_after_the_other(ctx.device, stream, out, count);
    std::printf(
        "\nOne graph, two allocations of %s whose lifetimes do not overlap (A freed before B\n"
        "is allocated): A at %p, B at %p; the graph allocator reserved at most %s.\n",
        format_bytes(bytes).c_str(), s.a, s.b, format_bytes(s.reserved_high).c_str());

    const Unfreed u = outside_the_graph(stream, out, count);
    CUDA_CHECK(cudaDeviceGraphMemTrim(ctx.device));
    std::printf(
        "\nA graph that leaves its allocation unfreed: a kernel after it in the stream read it\n"
        "(%zu wrong); once cudaFreeAsync had freed it, the graph launched again: %s.\n"
        "Instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch, a second launch with no\n"
        "free in between returned %s, and its data was at the same address (%zu wrong).\n",
        u.wrong_after, cudaGetErrorName(u.after_free), cudaGetErrorName(u.auto_relaunch),
        u.wrong_relaunch);

    const std::size_t step_count = std::size_t{1} << 18;  // 1 MiB: the allocation cost shows
    const int steps = ctx.quick() ? 50 : 200;
    const int rounds = ctx.iters_or(ctx.quick() ? 3 : 7);
    const std::vector<tutorial::Spread> ms = time_steps(stream, out, step_count, steps, rounds);
    const std::size_t step_wrong = wrong_values(out, step_count);
    print_steps_table(ms, step_count, steps, rounds);

    std::printf("\nWhat the documentation forbids, in a child process:\n");
    const tutorial::ChildResult child =
        tutorial::run_child("graph_memory_misuse", {std::to_string(ctx.device)});
    tutorial::print_child_output(child);
    std::printf("The child %s.\n\n", child.describe().c_str());
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaStreamDestroy(stream));

    claim_lessons(ctx, Results{w, s, u, ms, child}, bytes);
    const bool ok = w.built_wrong == 0 && w.captured_wrong == 0 && s.wrong == 0 &&
                    u.wrong_after == 0 && step_wrong == 0;
    return ctx.verdict(ok, format("every graph's result checked on the host: %zu values wrong "
                                  "in all",
                                  w.built_wrong + w.captured_wrong + s.wrong + u.wrong_after +
                                      step_wrong));
}
