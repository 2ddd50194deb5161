// Section misuse (fault demo): memory handed to the wrong free or pin call, free() on pinned
// memory, and a kernel writing memory registered read-only.
// Built alone, from the course's folder (mkdir -p build first), then ./build/misuse:
//   nvcc -std=c++17 -I. 02_pinned/misuse.cu common/standalone.cu -o build/misuse
//   (or in 02_pinned/: nvcc -std=c++17 -I.. misuse.cu ../common/standalone.cu -o ../build/misuse)
#include "common/check.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr std::size_t demo_bytes = 1 << 20;

// Each way of getting memory has its own way of giving it back: cudaMalloc / cudaFree,
// cudaMallocHost / cudaFreeHost, cudaHostRegister / cudaHostUnregister (then free), malloc /
// free. Each call below pairs memory with the wrong one. The reference names the error for two
// of them: pinning a range twice, and unpinning memory that was never pinned. For the others it
// only says what the pointer must be, so what they do is the driver's choice.
struct Misuse {
    const char* call;
    cudaError_t got;
};

std::vector<Misuse> mismatched_calls(void* pinned, void* device, void* registered, void* plain) {
    return {
        {"cudaFree(pinned)", cudaFree(pinned)},
        {"cudaFreeHost(device)", cudaFreeHost(device)},
        {"cudaFreeHost(malloc'd)", cudaFreeHost(plain)},
        {"cudaHostRegister(pinned)", cudaHostRegister(pinned, demo_bytes, 0)},
        {"cudaHostRegister(registered) again", cudaHostRegister(registered, demo_bytes, 0)},
        {"cudaHostUnregister(malloc'd)", cudaHostUnregister(plain)},
    };
}

// One allocation of each kind, each handed to the wrong call, then freed with the right one (which
// still works only if the wrong call freed nothing). Returns what each wrong call returned.
std::vector<Misuse> walkthrough() {
    void* pinned = nullptr;
    void* device = nullptr;
    void* registered = std::malloc(demo_bytes);
    void* plain = std::malloc(demo_bytes);
    CUDA_CHECK(cudaMallocHost(&pinned, demo_bytes));
    CUDA_CHECK(cudaMalloc(&device, demo_bytes));
    CUDA_CHECK(cudaHostRegister(registered, demo_bytes, cudaHostRegisterDefault));
    const std::vector<Misuse> found = mismatched_calls(pinned, device, registered, plain);
    (void)cudaGetLastError();  // the refused calls left their error behind as the last one
    CUDA_CHECK(cudaHostUnregister(registered));
    CUDA_CHECK(cudaFreeHost(pinned));
    CUDA_CHECK(cudaFree(device));
    std::free(registered);
    std::free(plain);
    return found;
}

// free() on memory from cudaMallocHost is undefined behaviour: the C library looks for its own
// bookkeeping in front of the pointer and may abort, crash, or quietly damage its heap.
void free_pinned_with_free() {
    void* pinned = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, demo_bytes));
    std::free(pinned);  // wrong: cudaFreeHost(pinned) is the matching call
}

// A kernel writes memory registered with cudaHostRegisterReadOnly. Where the device mapped those
// pages read-only the write faults, and the context is lost for good; the reference names no
// error for it, and where the device uses the host's page tables it may simply succeed.
__global__ void write_ones(int* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = 1;
    }
}

int write_read_only_memory() {
    int* host = static_cast<int*>(std::calloc(demo_bytes, 1));
    CUDA_CHECK(cudaHostRegister(host, demo_bytes, cudaHostRegisterReadOnly));
    int* device_view = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&device_view, host, 0));
    write_ones<<<64, 256>>>(device_view, demo_bytes / sizeof(int));
    CUDA_CHECK_LAUNCH_SYNC();
    return host[0];
}

}  // namespace

#ifndef TUTORIAL_CHECKS
// The walkthrough; the two faults only when asked (./misuse free, ./misuse read-only): each ends
// the process.
int main(int argc, char** argv) {
    const std::string which = argc > 1 ? argv[1] : "";
    if (which == "free") free_pinned_with_free();
    if (which == "read-only") std::printf("host[0] = %d\n", write_read_only_memory());
    for (const Misuse& m : walkthrough())
        std::printf("%-36s -> %s\n", m.call, cudaGetErrorName(m.got));
    return 0;
}
#endif
