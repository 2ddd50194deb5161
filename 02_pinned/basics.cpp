// Section basics: the pageable/pinned/device memory tutorial's program. One value carried from
// pageable memory to the device and on to pinned memory, each buffer freed with its own call.
#include "common/check.hpp"

#include <limits>
#include <string>

namespace {

constexpr int count = 100;

// What the three allocations are to CUDA, and what arrived at the end of the journey.
struct Journey {
    std::string device_type, host_type, pinned_type;
    float value;  // memory_page_locked[2]
    int wrong;    // values that differ from the pageable original
};

// Step 1. What CUDA knows about a pointer: device memory, pinned host memory, or nothing at all.
const char* memory_type_name(const void* pointer) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    switch (attributes.type) {
        case cudaMemoryTypeUnregistered: return "cudaMemoryTypeUnregistered";
        case cudaMemoryTypeHost: return "cudaMemoryTypeHost";
        case cudaMemoryTypeDevice: return "cudaMemoryTypeDevice";
        case cudaMemoryTypeManaged: return "cudaMemoryTypeManaged";
    }
    return "?";
}

// Step 2. A value carried pageable -> device -> pinned; each buffer freed with its own call.
Journey carry_a_value() {
    const std::size_t bytes = count * sizeof(float);
    float* memory_device = nullptr;
    CUDA_CHECK(cudaMalloc(&memory_device, bytes));
    float* memory_host = new float[count];  // every element gets a value, not only element 2
    for (int i = 0; i < count; ++i) memory_host[i] = 0.5f * static_cast<float>(i);
    memory_host[2] = 520.25f;
    CUDA_CHECK(cudaMemcpy(memory_device, memory_host, bytes, cudaMemcpyHostToDevice));
    float* memory_page_locked = nullptr;
    CUDA_CHECK(cudaMallocHost(&memory_page_locked, bytes));
    for (int i = 0; i < count; ++i) memory_page_locked[i] = std::numeric_limits<float>::quiet_NaN();
    CUDA_CHECK(cudaMemcpy(memory_page_locked, memory_device, bytes, cudaMemcpyDeviceToHost));

    Journey j{memory_type_name(memory_device), memory_type_name(memory_host),
              memory_type_name(memory_page_locked), memory_page_locked[2], 0};
    for (int i = 0; i < count; ++i) j.wrong += !(memory_page_locked[i] == memory_host[i]);
    CUDA_CHECK(cudaFreeHost(memory_page_locked));
    delete[] memory_host;
    CUDA_CHECK(cudaFree(memory_device));
    return j;
}

}  // namespace
