// Checks of section graph_memory: runs the graphs of ../graph_memory.cu, reads the graph
// allocator's books and the device's free memory after each step, times a step three ways, and
// makes the mistakes the reference forbids in a child.
#include "06_vmm/graph_memory.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

using tutorial::format;
using tutorial::format_bytes;

namespace {

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

void reset_high_watermarks(int device) {
    std::uint64_t zero = 0;
    CUDA_CHECK(cudaDeviceSetGraphMemAttribute(device, cudaGraphMemAttrUsedMemHigh, &zero));
    CUDA_CHECK(cudaDeviceSetGraphMemAttribute(device, cudaGraphMemAttrReservedMemHigh, &zero));
}

// The graph allocator's books and the device's free memory after one step.
struct Snapshot {
    std::string step;
    std::uint64_t used, reserved;
    std::size_t free_bytes;
};

Snapshot snapshot(int device, std::string step) {
    return {std::move(step), graph_memory(device, cudaGraphMemAttrUsedMemCurrent),
            graph_memory(device, cudaGraphMemAttrReservedMemCurrent),
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
    trim(device);  // start from an empty graph allocator
    r.steps.push_back(snapshot(device, "before"));
    cudaGraph_t built = build_graph(device, out, count);
    cudaGraphExec_t built_exec = instantiate(built);
    r.steps.push_back(snapshot(device, "built and instantiated"));
    CUDA_CHECK(cudaMemsetAsync(out, 0, count * sizeof *out, stream));
    launch(built_exec, stream);
    r.built_wrong = wrong_values(out, count);
    r.steps.push_back(snapshot(device, "launched, synchronized"));
    CUDA_CHECK(cudaGraphExecDestroy(built_exec));
    CUDA_CHECK(cudaGraphDestroy(built));
    r.steps.push_back(snapshot(device, "graph destroyed"));
    trim(device);
    r.steps.push_back(snapshot(device, "cudaDeviceGraphMemTrim"));

    cudaGraph_t captured = capture_graph(stream, out, count);
    cudaGraphExec_t captured_exec = instantiate(captured);
    CUDA_CHECK(cudaMemsetAsync(out, 0, count * sizeof *out, stream));
    launch(captured_exec, stream);
    r.captured_wrong = wrong_values(out, count);
    CUDA_CHECK(cudaGraphExecDestroy(captured_exec));
    CUDA_CHECK(cudaGraphDestroy(captured));
    trim(device);
    return r;
}

// Claim 3: two allocations in one graph whose lifetimes do not overlap (A is freed before B is
// allocated) may share physical memory (the Guide's word: whether they do is the allocator's
// choice). Returns the graph allocator's reserved high watermark.
struct Sharing {
    std::uint64_t reserved_high = 0;
    void* a = nullptr;
    void* b = nullptr;
    std::size_t wrong = 0;
};

Sharing one_after_the_other(int device, cudaStream_t stream, std::uint32_t* out,
                            std::size_t count) {
    trim(device);
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
    launch(exec, stream);
    Sharing s{graph_memory(device, cudaGraphMemAttrReservedMemHigh), a, b,
              wrong_values(out, count)};
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    trim(device);
    return s;
}

// Claim 4: an allocation the graph leaves unfreed is usable after the launch, by work in the
// stream, and must be freed before the graph can run again: with cudaFreeAsync, or by the
// relaunch itself where the graph was instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch.
// Then the new launch's allocation is at the same address (the old contents are zeroed in
// between, so only the new launch's writes can pass the check), and the relaunch freed the old one
// first: after two relaunches the graph allocator holds no more than after one.
struct Books {
    std::uint64_t used = 0, reserved = 0;
};

Books books(int device) {
    return {graph_memory(device, cudaGraphMemAttrUsedMemCurrent),
            graph_memory(device, cudaGraphMemAttrReservedMemCurrent)};
}

struct Unfreed {
    std::size_t wrong_after = 0;                   // consume, in the stream after the graph
    cudaError_t after_free = cudaErrorUnknown;     // a second launch once cudaFreeAsync has run
    cudaError_t auto_relaunch = cudaErrorUnknown;  // with the flag, no free in between: twice
    cudaError_t auto_relaunch_again = cudaErrorUnknown;
    std::size_t wrong_relaunch = 0;  // what consume read at the same address
    Books after_one, after_two;      // the graph allocator after the first relaunch, the second
};

Unfreed outside_the_graph(int device, cudaStream_t stream, std::uint32_t* out, std::size_t count) {
    Unfreed u;
    const std::size_t bytes = count * sizeof(std::uint32_t);
    cudaGraph_t graph = nullptr;
    std::uint32_t* result = capture_unfreed(stream, count, &graph);
    cudaGraphExec_t exec = instantiate(graph);
    launch_use_free(exec, stream, result, out, count);
    u.wrong_after = wrong_values(out, count);
    u.after_free = cudaGraphLaunch(exec, stream);
    CUDA_CHECK(cudaFreeAsync(result, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaGraphExecDestroy(exec));

    cudaGraphExec_t auto_exec = instantiate_auto_free(graph);
    CUDA_CHECK(cudaGraphLaunch(auto_exec, stream));
    u.auto_relaunch = cudaGraphLaunch(auto_exec, stream);  // no free in between
    CUDA_CHECK(cudaStreamSynchronize(stream));
    u.after_one = books(device);
    CUDA_CHECK(cudaMemsetAsync(result, 0, bytes, stream));       // this launch's data, wiped
    u.auto_relaunch_again = cudaGraphLaunch(auto_exec, stream);  // again no free in between
    CUDA_CHECK(cudaStreamSynchronize(stream));
    u.after_two = books(device);
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

std::vector<tutorial::Spread> time_steps(cudaStream_t stream, std::uint32_t* out, std::size_t count,
                                         int steps, int rounds) {
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

// Child role `graph_memory_misuse` (args: device): what the reference forbids, one line per call
// (cudaGraphLaunch and cudaGraphAddMemFreeNode name the error, cudaGraphInstantiate only says
// "an error"); exit 0 when each was refused.
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
    line("cudaGraphInstantiate of it a second time", cudaGraphInstantiate(&second, unfreed, 0));
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
    trim(device);
    return refused == 3 ? 0 : 3;
}

namespace {

void print_steps(const std::vector<Snapshot>& steps) {
    tutorial::Table table({{"step"},
                           {"graph used", tutorial::Align::right},
                           {"graph reserved", tutorial::Align::right},
                           {"device free", tutorial::Align::right}});
    for (const Snapshot& s : steps) {
        table.add_row(
            {s.step, format_bytes(s.used), format_bytes(s.reserved), format_bytes(s.free_bytes)});
    }
    table.print();
}

// Device memory taken between two snapshots (negative: given back), in bytes.
double taken(const Snapshot& from, const Snapshot& to) {
    return static_cast<double>(from.free_bytes) - static_cast<double>(to.free_bytes);
}

// Where the Programming Guide's CUDA Graphs chapter, "Graph Memory Nodes", says what the graph
// allocator does with physical memory.
constexpr const char* first_launch_maps =
    "Programming Guide, CUDA Graphs, Graph Memory Nodes (First Launch / cudaGraphUpload)";
constexpr const char* footprint =
    "Programming Guide, CUDA Graphs, Graph Memory Nodes (Physical Memory Footprint)";

void claim_memory(tutorial::Context& ctx, const TwoWays& w, std::size_t bytes) {
    const Snapshot& before = w.steps[0];
    const Snapshot& instantiated = w.steps[1];
    const Snapshot& launched = w.steps[2];
    const Snapshot& destroyed = w.steps[3];
    const Snapshot& trimmed = w.steps[4];
    const double size = static_cast<double>(bytes);
    ctx.claim(tutorial::documented(
        "instantiating the graph maps no memory for it; its first launch does",
        instantiated.reserved == before.reserved && launched.reserved >= bytes,
        format("graph reserved %s before, %s instantiated, %s launched",
               format_bytes(before.reserved).c_str(), format_bytes(instantiated.reserved).c_str(),
               format_bytes(launched.reserved).c_str()),
        "the instantiation mapped the memory, or the launch took it from elsewhere",
        first_launch_maps));
    ctx.claim(tutorial::documented(
        "after the graph ran and freed its allocation, the memory stays with the graph allocator",
        launched.reserved >= bytes && destroyed.reserved >= bytes &&
            taken(before, launched) > size / 2,
        format(
            "reserved %s after the launch, %s with the graph destroyed; device free memory "
            "%s lower than before",
            format_bytes(launched.reserved).c_str(), format_bytes(destroyed.reserved).c_str(),
            format_bytes(static_cast<std::size_t>(std::max(0.0, taken(before, launched)))).c_str()),
        "the driver returned the memory at the free node or at the synchronize", footprint));
    ctx.claim(tutorial::documented(
        "cudaDeviceGraphMemTrim gives it back to the device",
        trimmed.reserved < bytes && taken(destroyed, trimmed) < -size / 2,
        format("reserved %s after the trim; device free memory %s higher",
               format_bytes(trimmed.reserved).c_str(),
               format_bytes(static_cast<std::size_t>(std::max(0.0, -taken(destroyed, trimmed))))
                   .c_str()),
        "memory another program allocated meanwhile, or a graph still scheduled to run",
        "Runtime API reference: cudaDeviceGraphMemTrim"));
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

// Claims 4 and 5: an allocation left unfreed, freed outside the graph or by the next launch.
void claim_unfreed(tutorial::Context& ctx, const Unfreed& u, std::size_t bytes) {
    ctx.claim(tutorial::documented(
        "an allocation a graph leaves unfreed is used after the launch and freed with "
        "cudaFreeAsync, and the graph can run again",
        u.wrong_after == 0 && u.after_free == cudaSuccess,
        format("%zu wrong; the launch after the free: %s", u.wrong_after,
               cudaGetErrorName(u.after_free)),
        "the free did not reach the graph allocator before the second launch",
        "Runtime API reference: cudaGraphAddMemAllocNode, cudaGraphLaunch"));
    ctx.claim(tutorial::documented(
        "with cudaGraphInstantiateFlagAutoFreeOnLaunch the graph relaunches with its allocation "
        "unfreed, and allocates at the same address",
        u.auto_relaunch == cudaSuccess && u.auto_relaunch_again == cudaSuccess &&
            u.wrong_relaunch == 0,
        format("relaunches %s and %s, %zu wrong at the address", cudaGetErrorName(u.auto_relaunch),
               cudaGetErrorName(u.auto_relaunch_again), u.wrong_relaunch),
        "the flag was not honoured, or the allocation moved",
        "Runtime API reference: cudaGraphLaunch, cudaGraphAddMemAllocNode"));
    // Freed first: a relaunch that kept the last allocation would hold one more each time.
    const double half = static_cast<double>(bytes) / 2;
    const bool freed_first =
        static_cast<double>(u.after_two.used) < static_cast<double>(u.after_one.used) + half &&
        static_cast<double>(u.after_two.reserved) <
            static_cast<double>(u.after_one.reserved) + half;
    ctx.claim(tutorial::documented(
        "...and each relaunch frees the last launch's allocation first: two relaunches hold no "
        "more than one",
        freed_first,
        format("graph used %s and reserved %s after one relaunch, %s and %s after two",
               format_bytes(u.after_one.used).c_str(), format_bytes(u.after_one.reserved).c_str(),
               format_bytes(u.after_two.used).c_str(), format_bytes(u.after_two.reserved).c_str()),
        "each relaunch kept the last allocation: the flag did not free it",
        "Programming Guide, CUDA Graphs, Graph Memory Nodes "
        "(cudaGraphInstantiateFlagAutoFreeOnLaunch)"));
}

// The child's lines: each misuse the reference forbids, with the error it names where it names one.
void claim_misuse(tutorial::Context& ctx, const tutorial::ChildResult& child) {
    ctx.claim(tutorial::documented_error(
        "relaunching a graph whose allocation is still live is refused",
        tutorial::child_answer(child, "cudaGraphLaunch again"), "cudaErrorInvalidValue",
        "this driver relaunched it", "Runtime API reference: cudaGraphLaunch"));
    const std::string second = tutorial::child_answer(child, "cudaGraphInstantiate of it");
    ctx.claim(tutorial::documented("a second instantiation of a graph with memory nodes is refused",
                                   second != "cudaSuccess" && second != "(no line)",
                                   "it returned " + second,
                                   "this driver made a second executable graph",
                                   "Runtime API reference: cudaGraphInstantiate"));
    ctx.claim(tutorial::documented_error(
        "a second free node for one allocation is refused",
        tutorial::child_answer(child, "cudaGraphAddMemFreeNode for"), "cudaErrorInvalidValue",
        "this driver added the node", "Runtime API reference: cudaGraphAddMemFreeNode"));
}

void claim_lessons(tutorial::Context& ctx, const Results& r, std::size_t bytes) {
    const TwoWays& w = r.w;
    const Sharing& s = r.s;
    const std::vector<tutorial::Spread>& ms = r.ms;
    ctx.claim(tutorial::documented(
        "a graph built with memory nodes and one captured from cudaMallocAsync/cudaFreeAsync "
        "both give the kernel's result",
        w.built_wrong == 0 && w.captured_wrong == 0,
        format("%zu and %zu values wrong", w.built_wrong, w.captured_wrong),
        "a kernel node ran before the allocation node or after the free node",
        "Runtime API reference: cudaGraphAddMemAllocNode, cudaMallocAsync"));
    claim_memory(ctx, w, bytes);
    // The Guide says such allocations may share physical memory; whether they do is the
    // allocator's choice, shown by its reserved high watermark.
    const double reserved = static_cast<double>(s.reserved_high);
    ctx.claim(tutorial::observed(
        "two allocations whose lifetimes do not overlap share physical memory",
        reserved <= 1.5 * static_cast<double>(bytes),
        format("the graph allocator reserved at most %s for two allocations of %s",
               format_bytes(s.reserved_high).c_str(), format_bytes(bytes).c_str()),
        "the Guide (Graph Memory Nodes) says such allocations may use the same physical memory"));
    claim_unfreed(ctx, r.u, bytes);
    ctx.claim(tutorial::at_least(
        "a step with cudaMalloc/cudaFree costs more than the graph's allocation and free",
        ms[malloc_free].median / ms[graph_launch].median, 1.5, "x",
        "the kernels dominate the step: try a smaller buffer"));
    ctx.claim(tutorial::at_least(
        "...and the graph launch is no slower than the same step in a stream with "
        "cudaMallocAsync (the stream's time / the graph's)",
        ms[stream_ordered].median / ms[graph_launch].median, 0.8, "x",
        "the graph launch costs more than the separate calls here"));
    claim_misuse(ctx, r.child);
}

// What the graph allocator's books showed, in words that follow the numbers.
void print_books(const TwoWays& w) {
    const Snapshot& before = w.steps[0];
    const Snapshot& instantiated = w.steps[1];
    const Snapshot& launched = w.steps[2];
    const Snapshot& destroyed = w.steps[3];
    const Snapshot& trimmed = w.steps[4];
    std::printf(
        "\nThe instantiation %s the graph allocator's reserved memory (%s), the first launch %s\n"
        "it (%s); after the free node ran, graphs still used %s and reserved %s; with the graph\n"
        "destroyed, %s stayed reserved, and cudaDeviceGraphMemTrim left %s. The Guide's Graph\n"
        "Memory Nodes section says mapping waits for the launch and that neither the free nor the\n"
        "destruction gives the memory back: only the trim does.\n",
        instantiated.reserved == before.reserved ? "left" : "CHANGED",
        format_bytes(instantiated.reserved).c_str(),
        launched.reserved > instantiated.reserved ? "raised" : "did not raise",
        format_bytes(launched.reserved).c_str(), format_bytes(launched.used).c_str(),
        format_bytes(launched.reserved).c_str(), format_bytes(destroyed.reserved).c_str(),
        format_bytes(trimmed.reserved).c_str());
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
    print_books(w);
    std::printf(
        "\nBuilt node by node: %zu values wrong; captured from the stream: %zu values wrong.\n",
        w.built_wrong, w.captured_wrong);

    const Sharing s = one_after_the_other(ctx.device, stream, out, count);
    std::printf(
        "\nOne graph, two allocations of %s whose lifetimes do not overlap (A freed before B\n"
        "is allocated): A at %p, B at %p; the graph allocator reserved at most %s.\n",
        format_bytes(bytes).c_str(), s.a, s.b, format_bytes(s.reserved_high).c_str());

    const Unfreed u = outside_the_graph(ctx.device, stream, out, count);
    trim(ctx.device);
    std::printf(
        "\nA graph that leaves its allocation unfreed: a kernel after it in the stream read it\n"
        "(%zu wrong); once cudaFreeAsync had freed it, the graph launched again: %s.\n"
        "Instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch, two relaunches with no\n"
        "free in between returned %s and %s, and the data was at the same address (%zu wrong);\n"
        "graphs used %s and reserved %s after the first relaunch, %s and %s after the second.\n",
        u.wrong_after, cudaGetErrorName(u.after_free), cudaGetErrorName(u.auto_relaunch),
        cudaGetErrorName(u.auto_relaunch_again), u.wrong_relaunch,
        format_bytes(u.after_one.used).c_str(), format_bytes(u.after_one.reserved).c_str(),
        format_bytes(u.after_two.used).c_str(), format_bytes(u.after_two.reserved).c_str());

    const std::size_t step_count = std::size_t{1} << 18;  // 1 MiB: the allocation cost shows
    const int steps = ctx.quick() ? 50 : 200;
    const int rounds = ctx.iters_or(ctx.quick() ? 3 : 7);
    const std::vector<tutorial::Spread> ms = time_steps(stream, out, step_count, steps, rounds);
    const std::size_t step_wrong = wrong_values(out, step_count);
    print_steps_table(ms, step_count, steps, rounds);

    std::printf("\nWhat the reference forbids, in a child process:\n");
    const tutorial::ChildResult child =
        tutorial::run_child("graph_memory_misuse", {std::to_string(ctx.device)});
    tutorial::print_child_output(child);
    std::printf("The child %s.\n\n", child.describe().c_str());
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaStreamDestroy(stream));

    claim_lessons(ctx, Results{w, s, u, ms, child}, bytes);
    const bool ok = w.built_wrong == 0 && w.captured_wrong == 0 && s.wrong == 0 &&
                    u.wrong_after == 0 && step_wrong == 0;
    return ctx.verdict(
        ok, format("every graph's result checked on the host: %zu values wrong "
                   "in all",
                   w.built_wrong + w.captured_wrong + s.wrong + u.wrong_after + step_wrong));
}

TUTORIAL_SECTION(graph_memory, run_graph_memory);
TUTORIAL_CHILD(graph_memory_misuse, child_graph_memory_misuse);
