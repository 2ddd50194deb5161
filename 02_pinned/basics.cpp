// Section basics: the pageable/pinned/device memory tutorial's program. One value carried from
// pageable memory to the device and on to pinned memory, each buffer freed with its own call.
// Alone: nvcc -std=c++17 -I. 02_pinned/basics.cpp common/standalone.cu -o basics
// Built alone, from the course's folder (mkdir -p build first), then ./build/basics:
//   nvcc -std=c++17 -I. 02_pinned/basics.cpp common/standalone.cu -o build/basics
//   (or in 02_pinned/: nvcc -std=c++17 -I.. basics.cpp ../common/standalone.cu -o ../build/basics)
#include "common/check.hpp"
#include "common/device.hpp"

#include <cstdio>
#include <limits>

namespace {

constexpr int count = 100;

// What the walkthrough found: what CUDA calls each buffer, and what arrived at the end.
struct Found {
    cudaMemoryType device_type, host_type, pinned_type;
    float value;  // memory_page_locked[2]
    int wrong;    // values that differ from the pageable original
};

// What CUDA knows about a pointer: device memory, pinned host memory, or nothing at all.
cudaMemoryType memory_type_of(const void* pointer) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    return attributes.type;
}

Found walkthrough() {
    const std::size_t bytes = count * sizeof(float);
    // 1. Device memory, and pageable host memory holding the value (every element gets one).
    float* memory_device = nullptr;
    CUDA_CHECK(cudaMalloc(&memory_device, bytes));
    float* memory_host = new float[count];
    for (int i = 0; i < count; ++i) memory_host[i] = 0.5f * static_cast<float>(i);
    memory_host[2] = 520.25f;
    // 2. Pageable -> device: the driver stages the bytes through a pinned buffer of its own.
    CUDA_CHECK(cudaMemcpy(memory_device, memory_host, bytes, cudaMemcpyHostToDevice));
    // 3. Pinned memory, filled with NaN so that a copy that did not happen shows.
    float* memory_page_locked = nullptr;
    CUDA_CHECK(cudaMallocHost(&memory_page_locked, bytes));
    for (int i = 0; i < count; ++i) memory_page_locked[i] = std::numeric_limits<float>::quiet_NaN();
    // 4. Device -> pinned: the copy engine writes straight into it.
    CUDA_CHECK(cudaMemcpy(memory_page_locked, memory_device, bytes, cudaMemcpyDeviceToHost));
    // 5. What CUDA calls each buffer, and whether every value arrived.
    Found found{memory_type_of(memory_device), memory_type_of(memory_host),
                memory_type_of(memory_page_locked), memory_page_locked[2], 0};
    for (int i = 0; i < count; ++i) found.wrong += !(memory_page_locked[i] == memory_host[i]);
    // 6. Each buffer freed with the call that matches its allocation.
    CUDA_CHECK(cudaFreeHost(memory_page_locked));
    delete[] memory_host;
    CUDA_CHECK(cudaFree(memory_device));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const Found found = walkthrough();
    std::printf("memory_device: %s\nmemory_host: %s\nmemory_page_locked: %s\n",
                tutorial::memory_type_name(found.device_type).c_str(),
                tutorial::memory_type_name(found.host_type).c_str(),
                tutorial::memory_type_name(found.pinned_type).c_str());
    std::printf("memory_page_locked[2] = %g; %d of %d values differ\n", found.value, found.wrong,
                count);
    return found.value == 520.25f && found.wrong == 0 ? 0 : 1;
}
#endif
