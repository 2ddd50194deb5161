// Section other_process (a fault demo): a device pointer is only an address in this process's
// virtual address space. checks/other_process.cu hands one to a child process as a number; the
// child uses it as below, and the calls' results are the lesson.
#include "common/check.hpp"

#include <cstdint>
#include <iostream>

namespace {

constexpr std::size_t count = 1 << 20;

// What each call returned in the process that was handed another process's pointer.
struct Use {
    cudaError_t query;
    cudaMemoryType type;
    const void* mine;  // the child's own buffer: by chance it could land at the same address
    cudaError_t launch, finish, after;
};

__global__ void copy_kernel(const std::uint32_t* from, std::uint32_t* to, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        to[i] = from[i];
    }
}

// Step 1. The address arrives as a number, here on standard input: nothing in it says which
// process it belongs to.
const std::uint32_t* receive_address() {
    std::uintptr_t address = 0;
    std::cin >> std::hex >> address;
    return reinterpret_cast<const std::uint32_t*>(address);
}

// Step 2. The mistake: a device pointer another process allocated, used as it is. No CUDA_CHECK on
// the calls that are expected to fail: what they return is the lesson.
Use use_foreign_pointer(const std::uint32_t* foreign) {
    Use r{};
    cudaPointerAttributes attributes{};
    r.query = cudaPointerGetAttributes(&attributes, foreign);
    r.type = attributes.type;
    std::uint32_t* mine = nullptr;
    CUDA_CHECK(cudaMalloc(&mine, count * sizeof *mine));
    r.mine = mine;
    copy_kernel<<<256, 256>>>(foreign, mine, count);
    r.launch = cudaGetLastError();
    r.finish = cudaDeviceSynchronize();
    r.after = cudaFree(mine);  // after an illegal address, the context is unusable
    return r;
}

}  // namespace
