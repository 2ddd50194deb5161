// Section batch_copies: thousands of small host -> device copies, one cudaMemcpyAsync each or one
// cudaMemcpyBatchAsync (CUDA 12.8, here in its CUDA 13.0 form) for all (checks/batch_copies.cu).
#include "common/check.hpp"

#include <cstdint>
#include <vector>

namespace {

constexpr std::size_t piece = 4096;  // bytes per copy

// Step 1. The copies: piece i goes from source piece order[i] to destination slot 2 * i, small
// pieces scattered on both sides.
struct Copies {
    std::vector<void*> dsts;
    std::vector<const void*> srcs;
    std::vector<std::size_t> sizes;
};

Copies plan(const char* host, char* device, const std::vector<std::uint32_t>& order) {
    Copies c;
    for (std::size_t i = 0; i < order.size(); ++i) {
        c.dsts.push_back(device + 2 * i * piece);
        c.srcs.push_back(host + static_cast<std::size_t>(order[i]) * piece);
        c.sizes.push_back(piece);
    }
    return c;
}

// Step 2. Many small copies: one call each...
void copy_loop(const Copies& c, cudaStream_t stream) {
    for (std::size_t i = 0; i < c.dsts.size(); ++i) {
        CUDA_CHECK(
            cudaMemcpyAsync(c.dsts[i], c.srcs[i], c.sizes[i], cudaMemcpyHostToDevice, stream));
    }
}

// Step 3. ...or one call for every piece. One set of attributes (attrsIdxs {0}) applies to all
// of them; srcAccessOrder says when the sources may be read: in stream order, or at any time
// (which lets the driver read pageable memory without staging each piece).
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

// Step 4. The five ways compared: from pinned and from pageable memory, a loop or a batch in
// stream order; from pageable memory also a batch that may read the sources out of stream order.
void copy_one_way(int way, const Copies& from_pinned, const Copies& from_pageable,
                  cudaStream_t stream) {
    switch (way) {
        case 0: copy_loop(from_pinned, stream); break;
        case 1: copy_batch(from_pinned, cudaMemcpySrcAccessOrderStream, stream); break;
        case 2: copy_loop(from_pageable, stream); break;
        case 3: copy_batch(from_pageable, cudaMemcpySrcAccessOrderStream, stream); break;
        case 4: copy_batch(from_pageable, cudaMemcpySrcAccessOrderAny, stream); break;
    }
}

}  // namespace
