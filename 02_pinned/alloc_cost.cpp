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

Found walkthrough(std::size_t bytes) {
    Found found{true, true};
    // 1. The yardstick: malloc, and one write per page, where the OS supplies each page.
    tutorial::step("malloc + touch every page");
    char* plain = static_cast<char*>(std::malloc(bytes));
    std::memset(plain, 1, bytes);
    tutorial::step("free");
    std::free(plain);

    // 2. New pinned memory: the driver gets the pages, zeroes and pins each one, and maps it.
    tutorial::step("cudaMallocHost");
    void* pinned = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    tutorial::step_end();
    found.pinned_seen = found.pinned_seen && is_pinned(pinned);
    tutorial::step("cudaFreeHost");
    CUDA_CHECK(cudaFreeHost(pinned));

    // 3. The same with a flag: write-combined pinned memory.
    tutorial::step("cudaHostAlloc(WriteCombined)");
    void* write_combined = nullptr;
    CUDA_CHECK(cudaHostAlloc(&write_combined, bytes, cudaHostAllocWriteCombined));
    tutorial::step_end();
    found.pinned_seen = found.pinned_seen && is_pinned(write_combined);
    tutorial::step("cudaFreeHost(write-combined)");
    CUDA_CHECK(cudaFreeHost(write_combined));
    tutorial::step_end();

    // 4. Memory the program already has, its pages written: uploaded as it is, pageable...
    char* data = static_cast<char*>(std::malloc(bytes));
    std::memset(data, 1, bytes);
    found.plain_seen = !is_pinned(data);
    void* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    tutorial::step("upload from pageable memory");
    CUDA_CHECK(cudaMemcpy(device, data, bytes, cudaMemcpyHostToDevice));
    // 5. ...then pinned where it is (only pinning is left to do: the pages exist), uploaded
    //    again, and unpinned: ordinary memory once more, still holding its data.
    tutorial::step("cudaHostRegister");
    CUDA_CHECK(cudaHostRegister(data, bytes, cudaHostRegisterDefault));
    tutorial::step_end();
    found.pinned_seen = found.pinned_seen && is_pinned(data);
    tutorial::step("upload once registered");
    CUDA_CHECK(cudaMemcpy(device, data, bytes, cudaMemcpyHostToDevice));
    tutorial::step("cudaHostUnregister");
    CUDA_CHECK(cudaHostUnregister(data));
    tutorial::step_end();
    found.plain_seen = found.plain_seen && !is_pinned(data);
    CUDA_CHECK(cudaFree(device));
    std::free(data);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(std::size_t{256} << 20);
    times.print();
    std::printf("256 MiB: pinned memory seen as host memory: %s; malloc memory unknown to CUDA "
                "before and after registration: %s\n",
                found.pinned_seen ? "yes" : "NO", found.plain_seen ? "yes" : "NO");
    return found.pinned_seen && found.plain_seen ? 0 : 1;
}
#endif
