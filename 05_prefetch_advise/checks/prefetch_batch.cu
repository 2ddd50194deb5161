// Checks of section prefetch_batch: the three ways of ../prefetch_batch.cu timed (host clock,
// calls and until done), a kernel's timed read of every range after each (fast where the pages
// are already on the GPU), what LastPrefetchLocation records, a split batch, arguments the
// batch entry forbids tried in a child, and the same counted by the driver. The batch call needs
// concurrentManagedAccess = 1 on every device in the system (its Runtime API reference entry).
#include "05_prefetch_advise/prefetch_batch.cu"

#include "../helpers/counted.hpp"
#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using tutorial::format;

namespace {

constexpr std::uint32_t seed = 47;

const char* const way_names[ways] = {"cudaMemPrefetchAsync per range",
                                     "one cudaMemPrefetchBatchAsync",
                                     "one cudaMemPrefetchAsync of the span"};

// Reads ranges [first, first + n) with a kernel: nothing else, so a range still on the CPU costs
// page faults and a migration that a resident one does not.
__global__ void read_ranges(const std::uint32_t* base, std::size_t first, std::size_t n,
                            unsigned long long* sum) {
    constexpr std::size_t words = range_bytes / 4, words_apart = stride / 4;
    unsigned long long local = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n * words;
         i += std::size_t(gridDim.x) * blockDim.x) {
        local += base[(first + i / words) * words_apart + i % words];
    }
    atomicAdd(sum, local);
}

// Where ranges [first, first + n) are, measured: the milliseconds of a kernel's first read of
// them, and of a second read right after, when the first has brought every page to the GPU.
struct Reads {
    double first_ms = 0, again_ms = 0;
};

Reads read_twice(const char* base, std::size_t first, std::size_t n) {
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    const auto* words = reinterpret_cast<const std::uint32_t*>(base);
    Reads reads;
    for (double* ms : {&reads.first_ms, &reads.again_ms}) {
        tutorial::EventTimer timer;
        timer.start();
        read_ranges<<<264, 256>>>(words, first, n, sum);
        CUDA_CHECK(cudaGetLastError());
        timer.stop();
        *ms = timer.elapsed_ms();
    }
    CUDA_CHECK(cudaFree(sum));
    return reads;
}

struct Timed {
    double calls_ms[ways] = {};     // host clock, first call until the last one returns
    double done_ms[ways] = {};      // ... until the stream has finished the prefetches
    double resident_ms[2] = {};     // loop and batch again, every range already on the GPU
    std::size_t placed[ways] = {};  // ranges whose last prefetch location names the GPU
    std::size_t on_cpu[ways] = {};  // ... names the CPU
    Reads read[ways];               // a kernel's first read of every range after each way
    std::size_t wrong = 0;          // values a kernel found wrong after each way
};

// Every run starts with the whole allocation on the CPU, as the CPU wrote it.
Timed time_ways(char* base, std::size_t count, int device, int runs) {
    const std::size_t bytes = count * stride;
    Ranges r = make_ranges(base, count);
    auto* values = reinterpret_cast<std::uint32_t*>(base);
    fill_on_host(values, bytes / 4, seed);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    Timed t;
    std::vector<double> calls[ways], done[ways], resident[2];
    for (int run = 0; run <= runs; ++run) {  // run 0 is the warm-up
        for (int w = 0; w < ways; ++w) {
            CUDA_CHECK(cudaMemPrefetchAsync(base, bytes, host_location(), 0, stream));
            CUDA_CHECK(cudaStreamSynchronize(stream));
            tutorial::HostTimer timer;
            prefetch(Way(w), r, device, stream);
            const double in_calls = timer.elapsed_ms();
            CUDA_CHECK(cudaStreamSynchronize(stream));
            const double until_done = timer.elapsed_ms();
            if (w != span) {  // the same prefetch again: nothing left to move
                timer.restart();
                prefetch(Way(w), r, device, stream);
                CUDA_CHECK(cudaStreamSynchronize(stream));
                if (run > 0) resident[w].push_back(timer.elapsed_ms());
            }
            if (run == 0) continue;
            calls[w].push_back(in_calls);
            done[w].push_back(until_done);
            if (run < runs) continue;
            t.read[w] = read_twice(base, 0, count);
            const std::vector<int> at = last_locations(r);
            t.placed[w] = std::count(at.begin(), at.end(), device);
            t.on_cpu[w] = std::count(at.begin(), at.end(), int(cudaCpuDeviceId));
            t.wrong += mismatches_on_device(values, bytes / 4, seed);
        }
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    for (int w = 0; w < ways; ++w) {
        t.calls_ms[w] = tutorial::median(calls[w]);
        t.done_ms[w] = tutorial::median(done[w]);
    }
    for (int w = 0; w < 2; ++w) t.resident_ms[w] = tutorial::median(resident[w]);
    return t;
}

// One batch, two places: ranges [0, count/2) to the GPU, the rest to the CPU. How many ranges'
// recorded location differs from their request, and a kernel's timed reads of each half.
struct Split {
    std::size_t misrecorded = 0;
    Reads gpu_half, cpu_half;
};

Split split_batch(char* base, std::size_t count, int device) {
    Ranges r = make_ranges(base, count);
    CUDA_CHECK(cudaMemPrefetchAsync(base, count * stride, gpu_location(device), 0, nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());  // both halves start on the GPU
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    prefetch_halves(r, device, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    Split split;
    const std::vector<int> at = last_locations(r);
    for (std::size_t i = 0; i < count; ++i) {
        split.misrecorded += at[i] != (i < count / 2 ? device : cudaCpuDeviceId);
    }
    split.gpu_half = read_twice(base, 0, count / 2);
    split.cpu_half = read_twice(base, count / 2, count - count / 2);
    return split;
}

// The table of the three ways and what the reads and the attribute showed.
void print_ways(const Timed& t, const Split& split, std::size_t count) {
    tutorial::Table table({{"how"},
                           {"in the calls ms", tutorial::Align::right},
                           {"until done ms", tutorial::Align::right},
                           {"us per range", tutorial::Align::right},
                           {"read ms: first, again", tutorial::Align::right},
                           {"recorded: GPU, CPU", tutorial::Align::right}});
    for (int w = 0; w < ways; ++w) {
        table.add_row({way_names[w], format("%.2f", t.calls_ms[w]), format("%.2f", t.done_ms[w]),
                       format("%.1f", 1000 * t.done_ms[w] / count),
                       format("%.3f, %.3f", t.read[w].first_ms, t.read[w].again_ms),
                       format("%zu, %zu", t.placed[w], t.on_cpu[w])});
    }
    table.print();
    std::printf(
        "\n\"read ms\": a kernel reading every range right after the prefetch, then once more. "
        "A first\nread close to the second, and far below the first read of ranges left on the "
        "CPU (below),\nfinds every page on the GPU already.\n"
        "\"recorded\": how many ranges' cudaMemRangeAttributeLastPrefetchLocation names the GPU, "
        "the CPU.\nThe Runtime API reference (cudaMemRangeGetAttribute) says it is the last "
        "place the program\nasked for, not where the pages are. Every range was last asked to "
        "the GPU, so by the entry\nevery range should name it; yet after the span's prefetch "
        "%zu ranges named the GPU and\n%zu the CPU (observed on %s; shown, not judged).\n"
        "The loop and the batch again, every range already on the GPU: %.2f ms and %.2f ms.\n"
        "After each way a kernel read the whole allocation: %zu values wrong.\n\n",
        t.placed[span], t.on_cpu[span], tutorial::this_driver().c_str(), t.resident_ms[loop],
        t.resident_ms[batch], t.wrong);
    std::printf(
        "One batch with two locations, first half to the GPU, second half to the CPU, all of it\n"
        "on the GPU before. A kernel's first read of the GPU half: %.3f ms (again: %.3f ms); of\n"
        "the CPU half: %.3f ms (again: %.3f ms). Recorded locations that differ from the "
        "request: %zu of %zu.\n\n",
        split.gpu_half.first_ms, split.gpu_half.again_ms, split.cpu_half.first_ms,
        split.cpu_half.again_ms, split.misrecorded, count);
}

// The three ways and a split batch once more, on 512 ranges (32 MiB of them in a 64 MiB span),
// with the driver's Unified Memory counters on: the bytes each way moved, and the page faults of
// a kernel reading every range right after it.
constexpr std::size_t counted_ranges = 512;

struct Counted {
    tutorial::UmTraffic way[ways];         // each way's prefetch, every range on the CPU before
    tutorial::UmTraffic read_after[ways];  // a kernel reading every range right after it
    tutorial::UmTraffic split;             // one batch: first half to the GPU, second to the CPU
};

Counted count_ways(tutorial::UmCounters& counters, int device, std::size_t& wrong) {
    const std::size_t n = counted_ranges;
    const std::size_t bytes = n * stride;
    char* base = nullptr;
    CUDA_CHECK(cudaMallocManaged(&base, bytes));
    Ranges r = make_ranges(base, n);
    auto* values = reinterpret_cast<std::uint32_t*>(base);
    fill_on_host(values, bytes / 4, seed);
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));  // the kernel adds to it (its value is unused)
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const auto to = [&](cudaMemLocation where) {  // uncounted: the whole allocation, one place
        CUDA_CHECK(cudaMemPrefetchAsync(base, bytes, where, 0, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
    };
    CountedSteps steps(counters);
    Counted c;
    for (int w = 0; w < ways; ++w) {
        to(host_location());
        c.way[w] = steps.step(way_names[w], [&] { prefetch(Way(w), r, device, stream); });
        c.read_after[w] = steps.step("    then a kernel reads every range", [&] {
            read_ranges<<<264, 256>>>(values, 0, n, sum);
            CUDA_CHECK(cudaGetLastError());
        });
    }
    to(gpu_location(device));
    c.split = steps.step("one batch: half to the GPU, half to the CPU",
                         [&] { prefetch_halves(r, device, stream); });
    wrong += mismatches_on_device(values, bytes / 4, seed);
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(sum));
    CUDA_CHECK(cudaFree(base));
    steps.print(
        tutorial::format("What the driver moved in each step, %zu ranges of %s (its "
                         "Unified Memory counters):",
                         n, tutorial::format_bytes(range_bytes).c_str()));
    return c;
}

// The counted claims: what the batch moved, that nothing was left to fault on, and where the
// split batch sent its second half.
void claim_counted(tutorial::Context& ctx, const tutorial::UmCounters& counters, const Counted& c) {
    const std::size_t asked = counted_ranges * range_bytes;
    std::printf(
        "\nThe batch moves what its ranges hold and nothing between them, where the span's\n"
        "prefetch moves the gaps too; after any of the three, a kernel finds every range in\n"
        "place.\n\n");
    ctx.claim(tutorial::counted_at_least(
                  "one batch call moves its ranges' bytes as requested migrations (requested MiB "
                  "host to device, % of the ranges' bytes)",
                  percent_of(c.way[batch].htod.requested, asked), 90.0, "%",
                  "the batch left ranges behind"),
              why_not_counted(counters, {&c.way[batch]}));
    ctx.claim(tutorial::counted_at_most(
                  "...and only those, not the gaps between them (all MiB host to device, % of the "
                  "ranges' bytes)",
                  percent_of(c.way[batch].htod.total, asked), 125.0, "%",
                  "the driver moved whole blocks around each range"),
              why_not_counted(counters, {&c.way[batch]}));
    ctx.claim(tutorial::counted_at_most("...without a page fault (GPU page faults)",
                                        double(c.way[batch].gpu_page_faults), 0.0, "",
                                        "something touched the ranges while they moved"),
              why_not_counted(counters, {&c.way[batch]}));
    std::uint64_t faults_after = 0;
    for (const tutorial::UmTraffic& t : c.read_after) {
        faults_after = std::max(faults_after, t.gpu_page_faults);
    }
    ctx.claim(tutorial::counted_at_most(
                  "each way leaves every range on the GPU: a kernel reading them right after it "
                  "takes no page fault (GPU page faults, the most after any way)",
                  double(faults_after), 0.0, "",
                  "the prefetch returned before its pages moved, or skipped ranges"),
              why_not_counted(counters, {&c.read_after[0], &c.read_after[1], &c.read_after[2]}));
    ctx.claim(tutorial::counted_at_least(
                  "one batch sends each range where its location says: the half sent to the CPU "
                  "moves there (MiB device to host, % of that half's bytes)",
                  percent_of(c.split.dtoh.total, asked / 2), 90.0, "%",
                  "prefetchLocIdxs was ignored and both halves stayed on the GPU"),
              why_not_counted(counters, {&c.split}));
}

}  // namespace

// Child role: cudaMemPrefetchBatchAsync with location arrays, flags and a stream its entry
// forbids (it names no error for them), then right. Exits 0 when each forbidden call was refused
// and the right one accepted, 10 otherwise (a failed CUDA_CHECK exits with 1).
int child_prefetch_batch_misuse(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    char* base = nullptr;
    CUDA_CHECK(cudaMallocManaged(&base, 2 * stride));
    Ranges r = make_ranges(base, 2);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaMemLocation to[] = {gpu_location(device), gpu_location(device), gpu_location(device)};
    std::size_t from_0[] = {0}, from_1[] = {1}, three[] = {0, 1, 2};
    int as_entry_says = 0;  // forbidden calls refused, and the right one accepted
    const auto show = [&](const char* what, cudaError_t err, bool forbidden) {
        (void)cudaGetLastError();
        as_entry_says += forbidden == (err != cudaSuccess);
        std::printf("%-40s -> %s\n", what, cudaGetErrorName(err));
    };
    show("prefetchLocIdxs[0] = 1 instead of 0",
         cudaMemPrefetchBatchAsync(r.pointers.data(), r.sizes.data(), 2, to, from_1, 1, 0, stream),
         true);
    show("3 locations for 2 ranges",
         cudaMemPrefetchBatchAsync(r.pointers.data(), r.sizes.data(), 2, to, three, 3, 0, stream),
         true);
    show("flags = 1 (reserved, must be 0)",
         cudaMemPrefetchBatchAsync(r.pointers.data(), r.sizes.data(), 2, to, from_0, 1, 1, stream),
         true);
    show("the legacy default stream (0)",
         cudaMemPrefetchBatchAsync(r.pointers.data(), r.sizes.data(), 2, to, from_0, 1, 0, nullptr),
         true);
    show("all of it right",
         cudaMemPrefetchBatchAsync(r.pointers.data(), r.sizes.data(), 2, to, from_0, 1, 0, stream),
         false);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(base));
    return as_entry_says == 5 ? 0 : 10;
}

tutorial::Result run_prefetch_batch(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    if (const std::string why = why_no_batch_calls(); !why.empty()) return ctx.skip(why);
    const std::size_t count = ctx.quick() ? 1024 : 4096;
    const int runs = ctx.iters_or(ctx.quick() ? 3 : 7);
    char* base = nullptr;
    CUDA_CHECK(cudaMallocManaged(&base, count * stride));
    const Timed t = time_ways(base, count, ctx.device, runs);
    const Split split = split_batch(base, count, ctx.device);
    CUDA_CHECK(cudaFree(base));
    std::printf(
        "%zu managed ranges of %s, %s apart in one allocation, written by the CPU and\n"
        "prefetched to GPU %d. Host clock from the first call, median of %d after 1 warm-up;\n"
        "the allocation goes back to the CPU before each run.\n\n",
        count, tutorial::format_bytes(range_bytes).c_str(), tutorial::format_bytes(stride).c_str(),
        ctx.device, runs);
    print_ways(t, split, count);
    const tutorial::ChildResult misuse =
        tutorial::run_child("prefetch_batch_misuse", {std::to_string(ctx.device)});
    std::printf("cudaMemPrefetchBatchAsync with wrong arguments, in a child:\n");
    tutorial::print_child_output(misuse);
    std::printf("The child %s.\n\n", misuse.describe().c_str());
    ctx.claim(tutorial::at_least(
        "while pages move, one batch call takes at most about 1.7 times a loop of calls "
        "(loop / batch)",
        t.done_ms[loop] / t.done_ms[batch], 0.6, "x", "the batch call adds a cost per range"));
    ctx.claim(tutorial::at_least(
        "the cost is per range: one prefetch of the covering span, twice the bytes, beats the "
        "batch (batch / span)",
        t.done_ms[batch] / t.done_ms[span], 3.0, "x", "the driver merged the ranges"));
    ctx.claim(tutorial::at_least(
        "with every range already in place the batch still pays per range, and the loop is "
        "faster (batch / loop)",
        t.resident_ms[batch] / t.resident_ms[loop], 2.0, "x",
        "the batch call skips ranges that are already in place"));
    // What the reference promises about the attribute: the last location requested, by each
    // prefetch of the batch as by cudaMemPrefetchAsync.
    const bool recorded =
        t.placed[loop] == count && t.placed[batch] == count && split.misrecorded == 0;
    ctx.claim(tutorial::documented(
        "LastPrefetchLocation names where each range was last sent, after the loop, the batch "
        "and the split batch",
        recorded,
        format("loop %zu, batch %zu, split batch %zu of %zu ranges", t.placed[loop],
               t.placed[batch], count - split.misrecorded, count),
        "the driver recorded another place than the one each range was last sent to",
        "Runtime API reference: cudaMemRangeGetAttribute, cudaMemPrefetchBatchAsync"));
    ctx.claim(tutorial::observed(
        "cudaMemPrefetchBatchAsync refuses each call its entry forbids, and accepts the right one",
        misuse.succeeded(), "the child " + misuse.describe(),
        "the cudaMemPrefetchBatchAsync entry says what the location arrays, the flags and the "
        "stream must be, but names no error for breaking it"));
    // What moved, counted by the driver once the timings are done, so that recording cannot slow
    // them.
    std::size_t wrong = t.wrong;
    {
        tutorial::UmCounters counters;
        claim_counted(ctx, counters, count_ways(counters, ctx.device, wrong));
    }
    return ctx.verdict(
        recorded && wrong == 0,
        format("every range read back right; the recorded location matched the request for the "
               "loop, the batch and %zu of %zu split ranges",
               count - split.misrecorded, count));
}

TUTORIAL_SECTION(prefetch_batch, run_prefetch_batch);
TUTORIAL_CHILD(prefetch_batch_misuse, child_prefetch_batch_misuse);
