// Section context: which call creates the device's primary context. The tutorial's program calls
// device queries, then cudaSetDevice, then cudaMalloc; a fresh process asks the driver after each.
// Alone: nvcc -std=c++17 -I. 02_pinned/context.cpp common/standalone.cu -o context
// Built alone, from the course's folder (mkdir -p build first), then ./build/context:
//   nvcc -std=c++17 -I. 02_pinned/context.cpp common/standalone.cu -o build/context
//   (or in 02_pinned/: nvcc -std=c++17 -I.. context.cpp ../common/standalone.cu
//       -o ../build/context)  (on the same line)
#include "common/check.hpp"
#include "common/device.hpp"

#include <cstdio>

using tutorial::primary_context_active;

namespace {

// What the walkthrough found: whether the device's primary context existed after each call (the
// driver's answer; asking never creates one).
struct Found {
    bool before, after_count, after_properties, after_set_device, after_malloc;
};

// The opening calls of the tutorial's program, in a process that has made no CUDA call yet.
Found walkthrough(int device) {
    Found found{};
    // 1. Before any runtime call.
    found.before = primary_context_active(device);
    // 2. Device queries: do they need a context?
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    found.after_count = primary_context_active(device);
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    found.after_properties = primary_context_active(device);
    // 3. cudaSetDevice: since CUDA 12.0 it initializes the primary context at once.
    CUDA_CHECK(cudaSetDevice(device));
    found.after_set_device = primary_context_active(device);
    // 4. The first allocation.
    float* memory_device = nullptr;
    CUDA_CHECK(cudaMalloc(&memory_device, 100 * sizeof(float)));
    found.after_malloc = primary_context_active(device);
    CUDA_CHECK(cudaFree(memory_device));
    return found;
}

// The same without cudaSetDevice, in another fresh process: the runtime uses device 0, and the
// first call that needs a device creates device 0's primary context itself. Returns whether it
// exists afterwards.
bool malloc_without_set_device() {
    float* memory_device = nullptr;
    CUDA_CHECK(cudaMalloc(&memory_device, 100 * sizeof(float)));
    const bool active = primary_context_active(0);
    CUDA_CHECK(cudaFree(memory_device));
    return active;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
// The walkthrough; with the argument without-set-device, cudaMalloc alone instead.
int main(int argc, char** argv) {
    const auto state = [](bool active) { return active ? "active" : "inactive"; };
    if (argc > 1 && std::string(argv[1]) == "without-set-device") {
        std::printf("before: %s\n", state(primary_context_active(0)));
        std::printf("cudaMalloc without cudaSetDevice: %s\n", state(malloc_without_set_device()));
        return 0;
    }
    const Found f = walkthrough(0);
    std::printf("before: %s\ncudaGetDeviceCount: %s\ncudaGetDeviceProperties: %s\n",
                state(f.before), state(f.after_count), state(f.after_properties));
    std::printf("cudaSetDevice: %s\ncudaMalloc: %s\n", state(f.after_set_device),
                state(f.after_malloc));
    return 0;
}
#endif
