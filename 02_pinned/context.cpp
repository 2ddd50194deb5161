// Section context: which call creates the device's primary context. The tutorial's program calls
// cudaSetDevice first; here a fresh process asks the driver after each call (checks/context.cpp).
#include "common/check.hpp"
#include "common/device.hpp"

using tutorial::primary_context_active;

namespace {

// Whether the device's primary context existed after each step (the driver's answer; asking
// never creates one).
struct Steps {
    bool before, after_count, after_properties, after_set_device, after_malloc;
};

// Step 1. The opening calls of the tutorial's program. Device queries come first: do they need a
// context? Which call creates it?
Steps opening_calls(int device) {
    Steps s{};
    s.before = primary_context_active(device);
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    s.after_count = primary_context_active(device);
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    s.after_properties = primary_context_active(device);
    CUDA_CHECK(cudaSetDevice(device));
    s.after_set_device = primary_context_active(device);
    float* memory_device = nullptr;
    CUDA_CHECK(cudaMalloc(&memory_device, 100 * sizeof(float)));
    s.after_malloc = primary_context_active(device);
    CUDA_CHECK(cudaFree(memory_device));
    return s;
}

// Step 2. The same without cudaSetDevice: the runtime uses device 0, and the first call that
// needs a device creates device 0's primary context itself. Returns whether it exists afterwards.
bool malloc_without_set_device() {
    float* memory_device = nullptr;
    CUDA_CHECK(cudaMalloc(&memory_device, 100 * sizeof(float)));
    const bool active = primary_context_active(0);
    CUDA_CHECK(cudaFree(memory_device));
    return active;
}

}  // namespace
