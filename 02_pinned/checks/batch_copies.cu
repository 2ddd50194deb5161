// Checks of section batch_copies: times the five ways of ../batch_copies.cu in turns, checks
// every destination piece with a kernel, passes wrong attribute arrays in a child, and judges.
#include "02_pinned/batch_copies.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>

using tutorial::format;

namespace {

constexpr std::size_t piece_values = piece / sizeof(std::uint32_t);
constexpr std::uint32_t seed = 23;

// Destination piece i (at twice the piece size apart: scattered) must hold source piece
// order[i], which holds pattern(order[i] * piece_values + e, seed).
__global__ void check_pieces(const std::uint32_t* dst, const std::uint32_t* order,
                             std::size_t pieces, unsigned long long* wrong) {
    const std::size_t total = pieces * piece_values;
    for (std::size_t k = blockIdx.x * blockDim.x + threadIdx.x; k < total;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t i = k / piece_values, e = k % piece_values;
        if (dst[2 * i * piece_values + e] != pattern(order[i] * piece_values + e, seed)) {
            atomicAdd(wrong, 1ull);
        }
    }
}

struct Way {
    const char* name;
    double ms = 0;  // host clock, from the first call until the stream is done
    std::size_t wrong = 0;
};

}  // namespace

// Child role: cudaMemcpyBatchAsync given wrong attribute arrays, each call's result printed.
int child_batch_misuse(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    void* host = nullptr;
    void* device = nullptr;
    CUDA_CHECK(cudaMallocHost(&host, 2 * piece));
    CUDA_CHECK(cudaMalloc(&device, 2 * piece));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    void* dsts[] = {device, static_cast<char*>(device) + piece};
    const void* srcs[] = {host, static_cast<char*>(host) + piece};
    std::size_t sizes[] = {piece, piece};
    cudaMemcpyAttributes good{};
    good.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    cudaMemcpyAttributes unset{};  // srcAccessOrder left at 0: cudaMemcpySrcAccessOrderInvalid
    std::size_t from_0[] = {0}, from_1[] = {1};
    cudaMemcpyAttributes two[] = {good, good};
    std::size_t out_of_range[] = {0, 2};
    const auto show = [](const char* what, cudaError_t err) {
        (void)cudaGetLastError();
        std::printf("%-58s -> %s\n", what, cudaGetErrorName(err));
    };
    show("srcAccessOrder left unset (Invalid)",
         cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &unset, from_0, 1, stream));
    show("attrsIdxs[0] = 1 instead of 0",
         cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &good, from_1, 1, stream));
    show("attrsIdxs = {0, 2} with count 2 (index past the end)",
         cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, two, out_of_range, 2, stream));
    show("the legacy default stream (0)",
         cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &good, from_0, 1, nullptr));
    show("all of it right", cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &good, from_0, 1, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(device));
    CUDA_CHECK(cudaFreeHost(host));
    return 0;
}

namespace {

struct BatchResult {
    std::vector<Way> ways;
};

BatchResult measure_ways(std::size_t pieces, int runs) {
    const std::size_t bytes = pieces * piece;
    char* pinned = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    std::vector<std::uint32_t> pageable_storage(bytes / sizeof(std::uint32_t));
    char* pageable = reinterpret_cast<char*>(pageable_storage.data());
    fill_on_host(reinterpret_cast<std::uint32_t*>(pinned), bytes / 4, seed);
    fill_on_host(pageable_storage.data(), bytes / 4, seed);
    char* device = nullptr;
    std::uint32_t* order_on_device = nullptr;
    unsigned long long* wrong = nullptr;
    CUDA_CHECK(cudaMalloc(&device, 2 * bytes));
    CUDA_CHECK(cudaMalloc(&order_on_device, pieces * sizeof(std::uint32_t)));
    CUDA_CHECK(cudaMallocManaged(&wrong, sizeof *wrong));
    std::vector<std::uint32_t> order(pieces);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), std::mt19937(7));  // scattered sources
    CUDA_CHECK(cudaMemcpy(order_on_device, order.data(), pieces * sizeof(std::uint32_t),
                          cudaMemcpyHostToDevice));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const Copies from_pinned = plan(pinned, device, order);
    const Copies from_pageable = plan(pageable, device, order);
    BatchResult r;
    r.ways = {{"pinned, cudaMemcpyAsync per piece"},
              {"pinned, one cudaMemcpyBatchAsync (SrcAccessOrderStream)"},
              {"pageable, cudaMemcpyAsync per piece"},
              {"pageable, one cudaMemcpyBatchAsync (SrcAccessOrderStream)"},
              {"pageable, one cudaMemcpyBatchAsync (SrcAccessOrderAny)"}};
    const int ways = static_cast<int>(r.ways.size());
    const auto time_once = [&](int way) {
        CUDA_CHECK(cudaMemsetAsync(device, 0, 2 * bytes, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        tutorial::HostTimer timer;
        copy_one_way(way, from_pinned, from_pageable, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        return timer.elapsed_ms();
    };
    // Interleaved rounds, each way once per round after one warm-up each: a slow moment of the
    // shared host falls on every way alike instead of on the one being timed then.
    std::vector<std::vector<double>> samples(ways);
    for (int way = 0; way < ways; ++way) time_once(way);
    for (int round = 0; round < runs; ++round)
        for (int way = 0; way < ways; ++way) samples[way].push_back(time_once(way));
    for (int way = 0; way < ways; ++way) {
        r.ways[way].ms = tutorial::median(samples[way]);
        time_once(way);  // once more, then check what arrived
        *wrong = 0;
        check_pieces<<<256, 256, 0, stream>>>(reinterpret_cast<const std::uint32_t*>(device),
                                              order_on_device, pieces, wrong);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        r.ways[way].wrong = *wrong;
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(wrong));
    CUDA_CHECK(cudaFree(order_on_device));
    CUDA_CHECK(cudaFree(device));
    CUDA_CHECK(cudaFreeHost(pinned));
    return r;
}

}  // namespace

tutorial::Result run_batch_copies(tutorial::Context& ctx) {
    const std::size_t pieces = ctx.size_or(16 << 20) / piece;  // --size: all pieces together
    const int runs = ctx.quick() ? 5 : 9;
    std::printf(
        "%zu copies of %s each, host -> device: source pieces in shuffled order, destinations\n"
        "%s apart. Host clock from the first call until the stream is done, median of %d\n"
        "after 1 warm-up; every destination piece checked by a kernel afterwards.\n\n",
        pieces, tutorial::format_bytes(piece).c_str(), tutorial::format_bytes(2 * piece).c_str(),
        runs);
    const BatchResult r = measure_ways(pieces, runs);
    tutorial::Table table({{"source, how"},
                           {"ms", tutorial::Align::right},
                           {"us per copy", tutorial::Align::right},
                           {"GB/s", tutorial::Align::right},
                           {"values wrong", tutorial::Align::right}});
    std::size_t wrong = 0;
    for (const Way& w : r.ways) {
        table.add_row({w.name, format("%.2f", w.ms), format("%.2f", 1000.0 * w.ms / pieces),
                       format("%.2f", tutorial::gb_per_s(pieces * piece, w.ms)),
                       format("%zu", w.wrong)});
        wrong += w.wrong;
    }
    table.print();
    std::printf(
        "\nPCIe moves 4 KiB in well under a microsecond; the rest is the cost of each copy: the\n"
        "call, and a command for the copy engine. From pageable memory, SrcAccessOrderAny lets\n"
        "the driver read the sources after the call returns; SrcAccessOrderStream makes it\n"
        "read them in stream order. Here Any took %.2fx the time of Stream: the hint lets the\n"
        "driver choose, it does not promise speed. Measure before relying on it.\n"
        "\ncudaMemcpyBatchAsync with wrong attribute arrays, in a child:\n",
        r.ways[4].ms / r.ways[3].ms);
    const tutorial::ChildResult misuse =
        tutorial::run_child("batch_misuse", {std::to_string(ctx.device)});
    tutorial::print_child_output(misuse);
    std::printf("The child %s.\n\n", misuse.describe().c_str());
    ctx.claim(tutorial::at_least(
        format("from pageable memory, one batch call moves %zu pieces of 4 KiB sooner than a loop "
               "of cudaMemcpyAsync (loop / batch in stream order)",
               pieces),
        r.ways[2].ms / r.ways[3].ms, 1.2, "x",
        "the driver stages pageable pieces one by one in a batch too"));
    ctx.claim(tutorial::at_least(
        "from pinned memory, the batch takes at most 1.25 times the loop's time (loop / batch)",
        r.ways[0].ms / r.ways[1].ms, 0.8, "x", "the batch call costs more than its copies"));
    const std::string unset = tutorial::child_answer(misuse, "srcAccessOrder left unset");
    ctx.claim(tutorial::documented_error(
        "every copy of a batch needs attributes with a valid srcAccessOrder", unset,
        "cudaErrorInvalidValue", "this driver accepts copies with no access order",
        "Runtime API reference: cudaMemcpyBatchAsync (each copy must have valid attributes, "
        "srcAccessOrder included, or the call returns cudaErrorInvalidValue)"));
    return ctx.verdict(wrong == 0 && misuse.succeeded(),
                       format("every destination piece held its source piece, %zu ways x %zu "
                              "pieces",
                              r.ways.size(), pieces));
}

TUTORIAL_SECTION(batch_copies, run_batch_copies);
TUTORIAL_CHILD(batch_misuse, child_batch_misuse);
