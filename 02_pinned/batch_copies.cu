// Section batch_copies: 4 KiB copies by the thousand, a cudaMemcpyAsync each or one batch call.
// Built alone, from the course's folder (mkdir -p build first), then ./build/batch_copies:
//   nvcc -std=c++17 -I. 02_pinned/batch_copies.cu common/standalone.cu -o build/batch_copies
//   (or in 02_pinned/: nvcc -std=c++17 -I.. batch_copies.cu ../common/standalone.cu
//       -o ../build/batch_copies)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

namespace {

constexpr std::size_t piece = 4096;  // bytes per copy
constexpr std::size_t piece_values = piece / sizeof(std::uint32_t);

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched. The
// five ways, in the order the walkthrough takes them.
constexpr tutorial::Step ways[5] = {{"pinned, cudaMemcpyAsync per piece"},
                                    {"pinned, one cudaMemcpyBatchAsync (SrcAccessOrderStream)"},
                                    {"pageable, cudaMemcpyAsync per piece"},
                                    {"pageable, one cudaMemcpyBatchAsync (SrcAccessOrderStream)"},
                                    {"pageable, one cudaMemcpyBatchAsync (SrcAccessOrderAny)"}};

// The copies: piece i goes from source piece order[i] to destination slot 2 * i, small pieces
// scattered on both sides.
struct Copies {
    std::vector<void*> dsts;
    std::vector<const void*> srcs;
    std::vector<std::size_t> sizes;
};

// Below the walkthrough: the plan of the copies, the two ways to make them (a call per piece,
// one batch call), and the kernel that checks every destination piece.
Copies plan(const char* host, char* device, const std::vector<std::uint32_t>& order);
void copy_loop(const Copies& c, cudaStream_t stream);
void copy_batch(const Copies& c, cudaMemcpySrcAccessOrder order, cudaStream_t stream);
__global__ void check_pieces(const std::uint32_t* dst, const std::uint32_t* order,
                             std::size_t pieces, std::uint32_t seed, unsigned long long* wrong);

// Returns the values that arrived wrong, over all five ways.
std::size_t walkthrough(std::size_t pieces) {
    const std::size_t bytes = pieces * piece;
    const std::uint32_t seed = 23;
    // 1. The sources, pinned and pageable, holding the same values; the pieces are taken in
    //    shuffled order, and land twice as far apart as they are: scattered on both sides.
    char* pinned = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    std::vector<std::uint32_t> pageable(bytes / sizeof(std::uint32_t));
    fill_on_host(reinterpret_cast<std::uint32_t*>(pinned), pageable.size(), seed);
    fill_on_host(pageable.data(), pageable.size(), seed);
    std::vector<std::uint32_t> order(pieces);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), std::mt19937(7));
    char* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, 2 * bytes));
    const Copies from_pinned = plan(pinned, device, order);
    const Copies from_pageable = plan(reinterpret_cast<char*>(pageable.data()), device, order);
    // 2. A stream of our own: a batch may not go to the legacy default stream. And, to check
    //    what arrived, the order on the device and a counter.
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::uint32_t* order_on_device = nullptr;
    unsigned long long* wrong = nullptr;
    CUDA_CHECK(cudaMalloc(&order_on_device, pieces * sizeof(std::uint32_t)));
    CUDA_CHECK(cudaMalloc(&wrong, sizeof *wrong));
    CUDA_CHECK(cudaMemcpy(order_on_device, order.data(), pieces * sizeof(std::uint32_t),
                          cudaMemcpyHostToDevice));
    // 3. Each way in turn: the destinations cleared, the copies queued and waited for, then every
    //    destination piece checked by a kernel.
    std::size_t total_wrong = 0;
    for (int way = 0; way < 5; ++way) {
        CUDA_CHECK(cudaMemsetAsync(device, 0, 2 * bytes, stream));
        CUDA_CHECK(cudaMemsetAsync(wrong, 0, sizeof *wrong, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        {
            const tutorial::During during(ways[way], stream);
            switch (way) {
                case 0: copy_loop(from_pinned, stream); break;
                case 1: copy_batch(from_pinned, cudaMemcpySrcAccessOrderStream, stream); break;
                case 2: copy_loop(from_pageable, stream); break;
                case 3: copy_batch(from_pageable, cudaMemcpySrcAccessOrderStream, stream); break;
                case 4: copy_batch(from_pageable, cudaMemcpySrcAccessOrderAny, stream); break;
            }
            CUDA_CHECK(cudaStreamSynchronize(stream));
        }
        check_pieces<<<256, 256, 0, stream>>>(reinterpret_cast<const std::uint32_t*>(device),
                                              order_on_device, pieces, seed, wrong);
        CUDA_CHECK_LAUNCH();
        unsigned long long found = 0;
        CUDA_CHECK(cudaMemcpyAsync(&found, wrong, sizeof found, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        total_wrong += found;
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(wrong));
    CUDA_CHECK(cudaFree(order_on_device));
    CUDA_CHECK(cudaFree(device));
    CUDA_CHECK(cudaFreeHost(pinned));
    return total_wrong;
}

Copies plan(const char* host, char* device, const std::vector<std::uint32_t>& order) {
    Copies c;
    for (std::size_t i = 0; i < order.size(); ++i) {
        c.dsts.push_back(device + 2 * i * piece);
        c.srcs.push_back(host + static_cast<std::size_t>(order[i]) * piece);
        c.sizes.push_back(piece);
    }
    return c;
}

// Many small copies: one call each...
void copy_loop(const Copies& c, cudaStream_t stream) {
    for (std::size_t i = 0; i < c.dsts.size(); ++i) {
        CUDA_CHECK(
            cudaMemcpyAsync(c.dsts[i], c.srcs[i], c.sizes[i], cudaMemcpyHostToDevice, stream));
    }
}

// ...or one call for every piece. One set of attributes (attrsIdxs {0}) applies to all of them;
// srcAccessOrder says when the sources may be read: in stream order, or at any time (which lets
// the driver read pageable memory without staging each piece).
void copy_batch(const Copies& c, cudaMemcpySrcAccessOrder order, cudaStream_t stream) {
    cudaMemcpyAttributes attributes{};
    attributes.srcAccessOrder = order;
    attributes.srcLocHint = {cudaMemLocationTypeHost, 0};  // hints matter for managed memory only
    attributes.dstLocHint = {cudaMemLocationTypeDevice, 0};
    attributes.flags = cudaMemcpyFlagDefault;
    std::size_t first_copy_of_each[] = {0};
    CUDA_CHECK(cudaMemcpyBatchAsync(c.dsts.data(), c.srcs.data(), c.sizes.data(), c.dsts.size(),
                                    &attributes, first_copy_of_each, 1, stream));
}

// Destination piece i must hold source piece order[i], which holds the pattern's values
// order[i] * piece_values + e. Counts the values that do not.
__global__ void check_pieces(const std::uint32_t* dst, const std::uint32_t* order,
                             std::size_t pieces, std::uint32_t seed, unsigned long long* wrong) {
    const std::size_t total = pieces * piece_values;
    for (std::size_t k = blockIdx.x * blockDim.x + threadIdx.x; k < total;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t i = k / piece_values, e = k % piece_values;
        if (dst[2 * i * piece_values + e] != pattern(order[i] * piece_values + e, seed))
            atomicAdd(wrong, 1ull);
    }
}

// A batch of two copies given wrong attribute arrays, and then right ones: what each call
// returned. A refused call leaves its error behind as the last error: cleared after each.
struct Answer {
    const char* what;
    cudaError_t got;
};

std::vector<Answer> wrong_attributes() {
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
    cudaMemcpyAttributes two[] = {good, good};
    std::size_t from_0[] = {0}, from_1[] = {1}, out_of_range[] = {0, 2};
    std::vector<Answer> answers;
    const auto batch = [&](const char* what, cudaMemcpyAttributes* attrs, std::size_t* idxs,
                           std::size_t n, cudaStream_t s) {
        answers.push_back({what, cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, attrs, idxs, n, s)});
        (void)cudaGetLastError();
    };
    batch("srcAccessOrder left unset (Invalid)", &unset, from_0, 1, stream);
    batch("attrsIdxs[0] = 1 instead of 0", &good, from_1, 1, stream);
    batch("attrsIdxs = {0, 2} with count 2 (index past the end)", two, out_of_range, 2, stream);
    batch("the legacy default stream (0)", &good, from_0, 1, nullptr);
    batch("all of it right", &good, from_0, 1, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(device));
    CUDA_CHECK(cudaFreeHost(host));
    return answers;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    std::size_t wrong = 0;
    for (int round = 0; round < 9; ++round) wrong += walkthrough(4096);  // the answer: medians
    times.print();
    std::printf("4096 pieces of 4 KiB, 5 ways, 9 times: %zu values arrived wrong\n", wrong);
    for (const Answer& a : wrong_attributes())
        std::printf("%-55s -> %s\n", a.what, cudaGetErrorName(a.got));
    // The answer: how much sooner one batch call moves the pieces than a loop of calls.
    const double loop_ms = times.median_host_ms(ways[2]);
    const double batch_ms = times.median_host_ms(ways[3]);
    std::printf("4096 pieces of 4 KiB from pageable memory: one cudaMemcpyBatchAsync took %.2f ms, "
                "a loop of cudaMemcpyAsync %.2f ms: the batch is %.2fx sooner; from pinned memory "
                "%.2fx\n",
                batch_ms, loop_ms, loop_ms / batch_ms,
                times.median_host_ms(ways[0]) / times.median_host_ms(ways[1]));
    return wrong == 0 ? 0 : 1;
}
#endif
