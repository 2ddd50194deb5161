// Section alloc_cost: what getting pinned memory and giving it back costs, each way against
// malloc, and after how many transfers pinning pays for itself. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 02_pinned/alloc_cost.cpp common/standalone.cu -o build/alloc_cost
//   (or in 02_pinned/: nvcc -std=c++17 -I.. alloc_cost.cpp ../common/standalone.cu
//       -o ../build/alloc_cost)  (on the same line)
#include "common/check.hpp"
#include "common/step.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// Whether CUDA knows the memory as (pinned) host memory.
bool is_pinned(const void* pointer) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    return attributes.type == cudaMemoryTypeHost;
}

// What the walkthrough found: whether CUDA saw each allocation as it should.
struct Found {
    bool pinned_seen;  // cudaMallocHost, cudaHostAlloc and registered memory: host memory
    bool plain_seen;   // malloc memory: unknown to CUDA, before and after its registration
};

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step plain_get{"malloc, one write per page"};
constexpr tutorial::Step plain_give{"free"};
constexpr tutorial::Step pinned_get{"new pinned memory (cudaMallocHost)"};
constexpr tutorial::Step pinned_give{"cudaFreeHost"};
constexpr tutorial::Step wc_get{"new write-combined memory (cudaHostAlloc)"};
constexpr tutorial::Step wc_give{"cudaFreeHost, write-combined"};
constexpr tutorial::Step upload_pageable{"upload from pageable memory"};
constexpr tutorial::Step register_get{"pinning touched memory (cudaHostRegister)"};
constexpr tutorial::Step upload_pinned{"upload once registered"};
constexpr tutorial::Step register_give{"cudaHostUnregister"};

Found walkthrough(std::size_t bytes) {
    Found found{true, true};
    // 1. The yardstick: malloc, and one write per page, where the OS supplies each page.
    char* plain = nullptr;
    {
        const tutorial::During during(plain_get);
        plain = static_cast<char*>(std::malloc(bytes));
        std::memset(plain, 1, bytes);
    }
    {
        const tutorial::During during(plain_give);
        std::free(plain);
    }

    // 2. New pinned memory: the driver gets the pages, zeroes and pins each one, and maps it.
    void* pinned = nullptr;
    {
        const tutorial::During during(pinned_get);
        CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    }
    found.pinned_seen = found.pinned_seen && is_pinned(pinned);
    {
        const tutorial::During during(pinned_give);
        CUDA_CHECK(cudaFreeHost(pinned));
    }

    // 3. The same with a flag: write-combined pinned memory.
    void* write_combined = nullptr;
    {
        const tutorial::During during(wc_get);
        CUDA_CHECK(cudaHostAlloc(&write_combined, bytes, cudaHostAllocWriteCombined));
    }
    found.pinned_seen = found.pinned_seen && is_pinned(write_combined);
    {
        const tutorial::During during(wc_give);
        CUDA_CHECK(cudaFreeHost(write_combined));
    }

    // 4. Memory the program already has, its pages written: uploaded as it is, pageable...
    char* data = static_cast<char*>(std::malloc(bytes));
    std::memset(data, 1, bytes);
    found.plain_seen = !is_pinned(data);
    void* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    {
        const tutorial::During during(upload_pageable);
        CUDA_CHECK(cudaMemcpy(device, data, bytes, cudaMemcpyHostToDevice));
    }
    // 5. ...then pinned where it is (only pinning is left to do: the pages exist), uploaded
    //    again, and unpinned: ordinary memory once more, still holding its data.
    {
        const tutorial::During during(register_get);
        CUDA_CHECK(cudaHostRegister(data, bytes, cudaHostRegisterDefault));
    }
    found.pinned_seen = found.pinned_seen && is_pinned(data);
    {
        const tutorial::During during(upload_pinned);
        CUDA_CHECK(cudaMemcpy(device, data, bytes, cudaMemcpyHostToDevice));
    }
    {
        const tutorial::During during(register_give);
        CUDA_CHECK(cudaHostUnregister(data));
    }
    found.plain_seen = found.plain_seen && !is_pinned(data);
    CUDA_CHECK(cudaFree(device));
    std::free(data);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::size_t bytes = std::size_t{1} << 30;
    walkthrough(bytes);         // a warm-up, as the chapter's program runs one
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    Found found{true, true};
    for (int round = 0; round < 5; ++round) {  // medians of five rounds
        const Found f = walkthrough(bytes);
        found.pinned_seen = found.pinned_seen && f.pinned_seen;
        found.plain_seen = found.plain_seen && f.plain_seen;
    }
    times.print();
    std::printf(
        "pinned memory seen as host memory: %s; malloc memory unknown to CUDA before and "
        "after registration: %s\n",
        found.pinned_seen ? "yes" : "NO", found.plain_seen ? "yes" : "NO");
    // The card's number: what new pinned memory costs against pinning memory already touched.
    const double malloc_host_ms = times.median_host_ms(pinned_get);
    const double register_ms = times.median_host_ms(register_get);
    std::printf(
        "1 GiB: cudaMallocHost took %.1f ms, cudaHostRegister of touched memory %.1f ms: "
        "registering is %.2fx cheaper\n",
        malloc_host_ms, register_ms, malloc_host_ms / register_ms);
    return found.pinned_seen && found.plain_seen ? 0 : 1;
}
#endif
