// Section other_process (a fault demo): a device pointer is only an address in this process's
// virtual address space. One process hands its cudaMalloc pointer to another as a number; the
// other uses it, and what each call returns there is the lesson. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 01_uva/other_process.cu common/standalone.cu -o build/other_process
//   (or in 01_uva/: nvcc -std=c++17 -I.. other_process.cu ../common/standalone.cu
//       -o ../build/other_process)  (on the same line)
#include "common/check.hpp"

#include <cstdint>
#include <iostream>

namespace {

constexpr std::size_t count = 1 << 20;

__global__ void copy_kernel(const std::uint32_t* from, std::uint32_t* to, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        to[i] = from[i];
    }
}

// The address arrives as a number, here on standard input: nothing in it says which process it
// belongs to.
const std::uint32_t* receive_address() {
    std::uintptr_t address = 0;
    std::cin >> std::hex >> address;
    return reinterpret_cast<const std::uint32_t*>(address);
}

// What each call returned in the process that was handed another process's pointer.
struct Found {
    cudaError_t query;
    cudaMemoryType type;
    const void* mine;  // its own buffer: by chance it could land at the same address
    cudaError_t launch, finish, after;
};

// In the other process: the mistake, a device pointer another process allocated, used as it is.
// No CUDA_CHECK on the calls that are expected to fail: what they return is the lesson.
Found walkthrough(const std::uint32_t* foreign) {
    Found found{};
    // 1. What does CUDA know about the address here?
    cudaPointerAttributes attributes{};
    found.query = cudaPointerGetAttributes(&attributes, foreign);
    found.type = attributes.type;
    (void)cudaGetLastError();  // its answer is kept above; the launch's below is its own
    // 2. A buffer of this process's own, for a kernel to copy into.
    std::uint32_t* mine = nullptr;
    CUDA_CHECK(cudaMalloc(&mine, count * sizeof *mine));
    found.mine = mine;
    // 3. A kernel reads the other process's address.
    copy_kernel<<<256, 256>>>(foreign, mine, count);
    found.launch = cudaGetLastError();
    found.finish = cudaDeviceSynchronize();
    // 4. After an illegal address the context is unusable: the next call fails too.
    found.after = cudaFree(mine);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
#include <string>

#include "common/device.hpp"
#include "common/patterns.hpp"

// Run without arguments, it is the first process: it allocates and fills a buffer, starts itself
// again as the second process (`other_process use`) and writes the buffer's address to it.
int main(int argc, char** argv) {
    if (argc > 1) {
        const Found found = walkthrough(receive_address());
        std::printf(
            "there: cudaPointerGetAttributes %s (%s); the kernel: launch %s, then %s;"
            " the next call %s\n",
            cudaGetErrorName(found.query), tutorial::memory_type_name(found.type).c_str(),
            cudaGetErrorName(found.launch), cudaGetErrorName(found.finish),
            cudaGetErrorName(found.after));
        return 0;
    }
    std::uint32_t* buffer = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer, count * sizeof *buffer));
    fill_on_device(buffer, count, 7);
    std::printf("here: cudaMalloc returned %p; handing it to another process\n",
                static_cast<void*>(buffer));
    std::fflush(stdout);
    FILE* other = popen((std::string(argv[0]) + " use").c_str(), "w");
    if (other == nullptr) return 1;
    std::fprintf(other, "%p\n", static_cast<void*>(buffer));
    pclose(other);
    std::printf("here: the buffer afterwards, %zu values wrong\n",
                mismatches_on_device(buffer, count, 7));
    CUDA_CHECK(cudaFree(buffer));
    return 0;
}
#endif
