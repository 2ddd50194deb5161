// Checks of section graph_memory: runs the walkthrough of ../graph_memory.cu round after round
// (its last step, the same step three ways, timed each time), prints the graph allocator's books
// as the first round found them, and makes the mistakes the reference forbids in a child.
#include "06_vmm/graph_memory.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

#include <cstdint>
#include <cstdlib>
#include <vector>

using tutorial::format;
using tutorial::format_bytes;

namespace {

// The walkthrough's timed steps, the same step three ways.
enum Way { graph_launch, stream_ordered, malloc_free, ways };
const tutorial::Step* const way_steps[ways] = {&as_graph, &in_stream, &with_malloc};

// The walkthrough `rounds` times: the first round's findings, and each way's time per step
// (median over the rounds, microseconds), with the fastest and slowest round.
struct Rounds {
    Found first;
    std::size_t wrong = 0;  // values wrong in every round, every graph
    tutorial::Spread us[ways];
};

std::size_t wrong_of(const Found& f) {
    return f.built_wrong + f.captured_wrong + f.sharing.wrong + f.unfreed.wrong +
           f.unfreed.wrong_relaunched + f.steps_wrong;
}

Rounds run_rounds(int device, std::size_t count, int steps, int rounds) {
    tutorial::StepTimes times;
    Rounds r;
    r.first = walkthrough(device, count, steps);
    r.wrong = wrong_of(r.first);
    for (int i = 1; i < rounds; ++i) r.wrong += wrong_of(walkthrough(device, count, steps));
    for (int way = 0; way < ways; ++way) {
        std::vector<double> per_step = times.host_ms(*way_steps[way]);
        for (double& ms : per_step) ms *= 1e3 / steps;
        r.us[way] = tutorial::spread_of(per_step);
    }
    return r;
}

void print_books(const Found& f) {
    tutorial::Table table({{"step"},
                           {"graph used", tutorial::Align::right},
                           {"graph reserved", tutorial::Align::right}});
    const std::pair<const char*, const Books*> rows[] = {
        {"before", &f.before},
        {"built and instantiated", &f.instantiated},
        {"launched, synchronized", &f.launched},
        {"graph destroyed", &f.destroyed},
        {"cudaDeviceGraphMemTrim", &f.trimmed}};
    for (const auto& [step, b] : rows)
        table.add_row({step, format_bytes(b->used), format_bytes(b->reserved)});
    table.print();
}

void print_steps_table(const Rounds& r, int steps, int rounds) {
    std::printf("\n5. The step on 1 MiB of scratch, %d times in a row, median of %d rounds:\n\n",
                steps, rounds);
    tutorial::Table table({{"way"},
                           {"us per step", tutorial::Align::right},
                           {"fastest..slowest round", tutorial::Align::right}});
    for (int way = 0; way < ways; ++way) {
        table.add_row({way_steps[way]->name, format("%.1f", r.us[way].median),
                       format("%.1f..%.1f", r.us[way].low, r.us[way].high)});
    }
    table.print();
}

void narrate(const Found& f, std::size_t bytes) {
    const Unfreed& u = f.unfreed;
    std::printf(
        "\nBuilt node by node: %zu values wrong; captured from the stream: %zu values wrong.\n"
        "\n3. One graph, two allocations of %s whose lifetimes do not overlap (A freed before B\n"
        "   is allocated): the graph allocator reserved at most %s.\n"
        "\n4. A graph that leaves its allocation unfreed: a kernel after it in the stream read it\n"
        "   (%zu wrong); once cudaFreeAsync had freed it, the graph launched again: %s.\n"
        "   Instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch, two relaunches with no\n"
        "   free in between returned %s and %s, and the data was at the same address (%zu\n"
        "   wrong); graphs used %s and reserved %s after the first relaunch, %s and %s after the\n"
        "   second.\n",
        f.built_wrong, f.captured_wrong, format_bytes(bytes).c_str(),
        format_bytes(f.sharing.reserved_high).c_str(), u.wrong, cudaGetErrorName(u.after_free),
        cudaGetErrorName(u.relaunch[0]), cudaGetErrorName(u.relaunch[1]), u.wrong_relaunched,
        format_bytes(u.after_one.used).c_str(), format_bytes(u.after_one.reserved).c_str(),
        format_bytes(u.after_two.used).c_str(), format_bytes(u.after_two.reserved).c_str());
}

// The Guide's CUDA Graphs chapter, "Graph Memory Nodes" (not among the source documents here:
// its words cannot be checked by CI): physical memory cannot be mapped during instantiation, and
// destroying a graph will not give its memory back, cudaDeviceGraphMemTrim does.
const tutorial::Entry first_launch_maps{
    "Programming Guide, CUDA Graphs, Graph Memory Nodes (First Launch / cudaGraphUpload)",
    "instantiation", "can"};
const tutorial::Entry footprint{
    "Programming Guide, CUDA Graphs, Graph Memory Nodes (Physical Memory Footprint)",
    "cudaDeviceGraphMemTrim", "will"};

void claim_books(tutorial::Context& ctx, const Found& f, std::size_t bytes) {
    ctx.claim(tutorial::documented(
        "both_ways_right",
        "a graph built with memory nodes and one captured from cudaMallocAsync/cudaFreeAsync "
        "both give the kernel's result",
        f.built_wrong == 0 && f.captured_wrong == 0,
        format("%zu and %zu values wrong", f.built_wrong, f.captured_wrong),
        "a kernel node ran before the allocation node or after the free node",
        tutorial::Entry{"Runtime API reference: cudaGraphAddMemAllocNode",
                        "cudaGraphAddMemFreeNode", "can"}));
    ctx.claim(tutorial::documented(
        "first_launch_maps", "instantiating the graph maps no memory for it; its first launch does",
        f.instantiated.reserved == f.before.reserved && f.launched.reserved >= bytes,
        format("graph reserved %s before, %s instantiated, %s launched",
               format_bytes(f.before.reserved).c_str(),
               format_bytes(f.instantiated.reserved).c_str(),
               format_bytes(f.launched.reserved).c_str()),
        "the instantiation mapped the memory, or the launch took it from elsewhere",
        first_launch_maps));
    ctx.claim(tutorial::documented(
        "memory_stays",
        "after the graph ran and freed its allocation, the memory stays with the graph allocator",
        f.launched.reserved >= bytes && f.destroyed.reserved >= bytes,
        format("reserved %s after the launch, %s with the graph destroyed",
               format_bytes(f.launched.reserved).c_str(),
               format_bytes(f.destroyed.reserved).c_str()),
        "the driver returned the memory at the free node or at the synchronize", footprint));
    ctx.claim(tutorial::documented(
        "trim_gives_back", "cudaDeviceGraphMemTrim gives it back to the device",
        f.trimmed.reserved < bytes,
        format("reserved %s after the trim", format_bytes(f.trimmed.reserved).c_str()),
        "a graph still scheduled to run held it",
        tutorial::Entry{"Runtime API reference: cudaDeviceGraphMemTrim", "Blocks not use",
                        "are freed"}));
    // Such allocations may share physical memory (the Guide's word); whether they do is the
    // allocator's choice, shown by its reserved high watermark.
    ctx.claim(tutorial::observed(
        "lifetimes_share", "two allocations whose lifetimes do not overlap share physical memory",
        static_cast<double>(f.sharing.reserved_high) <= 1.5 * static_cast<double>(bytes),
        format("the graph allocator reserved at most %s for two allocations of %s",
               format_bytes(f.sharing.reserved_high).c_str(), format_bytes(bytes).c_str()),
        "the Guide (Graph Memory Nodes) says such allocations may use the same physical memory"));
}

void claim_unfreed(tutorial::Context& ctx, const Unfreed& u, std::size_t bytes) {
    ctx.claim(tutorial::documented(
        "unfreed_used_after",
        "an allocation a graph leaves unfreed is used after the launch and freed with "
        "cudaFreeAsync, and the graph can run again",
        u.wrong == 0 && u.after_free == cudaSuccess,
        format("%zu wrong; the launch after the free: %s", u.wrong, cudaGetErrorName(u.after_free)),
        "the free did not reach the graph allocator before the second launch",
        tutorial::Entry{"Runtime API reference: cudaGraphAddMemAllocNode", "accessed stream",
                        "can"}));
    // Each relaunch frees the last launch's allocation first: had it kept it, two relaunches
    // would hold one allocation more than one relaunch.
    const double half = static_cast<double>(bytes) / 2;
    const bool freed_first =
        static_cast<double>(u.after_two.used) < static_cast<double>(u.after_one.used) + half &&
        static_cast<double>(u.after_two.reserved) <
            static_cast<double>(u.after_one.reserved) + half;
    const bool relaunched = u.relaunch[0] == cudaSuccess && u.relaunch[1] == cudaSuccess;
    ctx.claim(tutorial::documented(
        "auto_free_relaunches",
        "with cudaGraphInstantiateFlagAutoFreeOnLaunch the graph relaunches with its allocation "
        "unfreed, freeing the last launch's first",
        relaunched && freed_first,
        format("relaunches %s and %s; graph used %s and reserved %s after one relaunch, %s and %s "
               "after two",
               cudaGetErrorName(u.relaunch[0]), cudaGetErrorName(u.relaunch[1]),
               format_bytes(u.after_one.used).c_str(), format_bytes(u.after_one.reserved).c_str(),
               format_bytes(u.after_two.used).c_str(), format_bytes(u.after_two.reserved).c_str()),
        "the flag was not honoured",
        tutorial::Entry{"Runtime API reference: cudaGraphInstantiate",
                        "cudaGraphInstantiateFlagAutoFreeOnLaunch unfreed relaunched",
                        "configures"}));
    // The address the capture returned serves every instantiation and launch: after the second
    // instantiation's relaunches, consume reads the last launch's values there.
    ctx.claim(tutorial::documented(
        "relaunch_same_address",
        "...at the same address: after two instantiations and the relaunches, the allocation "
        "holds the last launch's values at the address the capture returned",
        relaunched && u.wrong_relaunched == 0,
        format("%zu wrong at the address", u.wrong_relaunched),
        "the allocation moved, or a relaunch failed",
        tutorial::Entry{"Runtime API reference: cudaGraphAddMemAllocNode", "address fixed",
                        "remains"}));
}

// The child's lines: each misuse the reference forbids, with the error it names where it names one.
void claim_misuse(tutorial::Context& ctx, const tutorial::ChildResult& child) {
    ctx.claim(tutorial::documented_error(
        "relaunch_live_refused", "relaunching a graph whose allocation is still live is refused",
        tutorial::child_answer(child, "cudaGraphLaunch again"), "cudaErrorInvalidValue",
        "this driver relaunched it",
        tutorial::Entry{
            "Runtime API reference: cudaGraphLaunch",
            "cudaGraphInstantiateFlagAutoFreeOnLaunch not unfreed cudaErrorInvalidValue",
            "will fail"}));
    const std::string second = tutorial::child_answer(child, "cudaGraphInstantiate of it");
    ctx.claim(tutorial::documented(
        "second_instance_refused", "a second instantiation of a graph with memory nodes is refused",
        second != "cudaSuccess" && second != "(no line)", "it returned " + second,
        "this driver made a second executable graph",
        tutorial::Entry{"Runtime API reference: cudaGraphInstantiate", "cudaGraphExecDestroy",
                        "will"}));
    ctx.claim(tutorial::documented_error(
        "second_free_refused", "a second free node for one allocation is refused",
        tutorial::child_answer(child, "cudaGraphAddMemFreeNode for"), "cudaErrorInvalidValue",
        "this driver added the node",
        tutorial::Entry{"Runtime API reference: cudaGraphAddMemFreeNode",
                        "cudaErrorInvalidValue twice", "will"}));
}

double malloc_over_graph(const Rounds& r) {
    return r.us[malloc_free].median / r.us[graph_launch].median;
}
double stream_over_graph(const Rounds& r) {
    return r.us[stream_ordered].median / r.us[graph_launch].median;
}

}  // namespace

// Child role `graph_memory_misuse` (args: device): the lesson's forbidden calls, one line each;
// exit 0 when each was refused.
int child_graph_memory_misuse(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const Misuse m = forbidden_calls(device, stream);
    std::printf("%-58s -> %s\n", "cudaGraphLaunch again, its allocation not yet freed",
                cudaGetErrorName(m.relaunch));
    std::printf("%-58s -> %s\n", "cudaGraphInstantiate of it a second time",
                cudaGetErrorName(m.second_instance));
    std::printf("%-58s -> %s\n", "cudaGraphAddMemFreeNode for an allocation already freed",
                cudaGetErrorName(m.second_free));
    CUDA_CHECK(cudaStreamDestroy(stream));
    const bool refused = m.relaunch != cudaSuccess && m.second_instance != cudaSuccess &&
                         m.second_free != cudaSuccess;
    return refused ? 0 : 3;
}

tutorial::Result run_graph_memory(tutorial::Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported) != 1) {
        return ctx.skip("memoryPoolsSupported = 0: no stream-ordered or graph allocations here");
    }
    const std::size_t bytes = ctx.size_or(tutorial::fit_in_free_memory(
        ctx.quick() ? (std::size_t{64} << 20) : (std::size_t{256} << 20), 0.2, 2 << 20));
    const int steps = ctx.quick() ? 50 : 200;
    // Under compute-sanitizer the timings are not judged: one round is enough there.
    const int rounds =
        tutorial::why_timing_not_judged().empty() ? ctx.iters_or(ctx.quick() ? 3 : 7) : 1;
    std::printf(
        "Scratch memory of %s: allocated, filled by `produce`, read by `consume` into `out`,\n"
        "freed. 1. Built node by node: the graph allocator's books\n"
        "(cudaDeviceGetGraphMemAttribute) after each step:\n\n",
        format_bytes(bytes).c_str());
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const Rounds r = run_rounds(ctx.device, count, steps, rounds);
    print_books(r.first);
    narrate(r.first, bytes);
    print_steps_table(r, steps, rounds);

    std::printf("\nWhat the reference forbids, in a child process:\n");
    const tutorial::ChildResult child =
        tutorial::run_child("graph_memory_misuse", {std::to_string(ctx.device)});
    tutorial::print_child_output(child);
    std::printf("The child %s.\n\n", child.describe().c_str());

    claim_books(ctx, r.first, bytes);
    claim_unfreed(ctx, r.first.unfreed, bytes);
    const auto again = [&] { return run_rounds(ctx.device, count, steps, rounds); };
    ctx.claim(tutorial::at_least(
                  "graph_beats_malloc",
                  "a step with cudaMalloc/cudaFree costs more than the graph's allocation and free",
                  malloc_over_graph(r), 1.5, "x",
                  "the kernels dominate the step: try a smaller buffer")
                  .again([&] { return malloc_over_graph(again()); }));
    ctx.claim(tutorial::at_least(
                  "graph_no_slower",
                  "...and the graph launch is no slower than the same step in a stream with "
                  "cudaMallocAsync (the stream's time / the graph's)",
                  stream_over_graph(r), 0.8, "x",
                  "the graph launch costs more than the separate calls here")
                  .again([&] { return stream_over_graph(again()); }));
    claim_misuse(ctx, child);
    return ctx.verdict(r.wrong == 0, format("every graph's result checked, in each of %d rounds: "
                                            "%zu values wrong in all",
                                            rounds, r.wrong));
}

TUTORIAL_SECTION(graph_memory, run_graph_memory);
TUTORIAL_CHILD(graph_memory_misuse, child_graph_memory_misuse);
