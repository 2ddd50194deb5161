// Section flags: every cudaHostAlloc and cudaHostRegister flag, what cudaHostGetFlags reports back,
// the device pointer of each allocation, and a kernel using it (checks/flags.cu runs every row).
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <cstdlib>

namespace {

// Step 1. Pinned memory made either way: allocated pinned (cudaHostAlloc), or allocated by
// malloc and pinned where it is (cudaHostRegister). Each flag asks for something more.
std::uint32_t* pin(bool registered, unsigned flags, std::size_t bytes) {
    std::uint32_t* host = nullptr;
    if (registered) {
        host = static_cast<std::uint32_t*>(std::malloc(bytes));
        CUDA_CHECK(cudaHostRegister(host, bytes, flags));
    } else {
        CUDA_CHECK(cudaHostAlloc(&host, bytes, flags));
    }
    return host;
}

void unpin(bool registered, std::uint32_t* host) {
    if (registered) {
        CUDA_CHECK(cudaHostUnregister(host));
        std::free(host);
    } else {
        CUDA_CHECK(cudaFreeHost(host));
    }
}

// Step 2. What CUDA says about it: its flags (the Runtime API reference's cudaHostGetFlags entry
// covers cudaHostAlloc memory only, so the status is returned, not checked) and the address
// kernels use.
cudaError_t ask(std::uint32_t* host, unsigned* flags, void** device_view) {
    const cudaError_t asked = cudaHostGetFlags(flags, host);
    CUDA_CHECK(cudaHostGetDevicePointer(device_view, host, 0));
    return asked;
}

// Step 3. A kernel uses the memory through that address: it writes values the CPU then reads,
// or, for memory the device may only read, reads values the CPU wrote. Returns the wrong ones.
std::size_t use_from_kernel(std::uint32_t* host, std::uint32_t* device_view, std::size_t count,
                            bool read_only, std::uint32_t pattern_seed) {
    if (read_only) {
        fill_on_host(host, count, pattern_seed);
        return mismatches_on_device(device_view, count, pattern_seed);
    }
    fill_on_device(device_view, count, pattern_seed);
    return mismatches_on_host(host, count, pattern_seed);
}

// Step 4. Every flag, and what it asks for.
struct Row {
    bool registered;  // cudaHostRegister rather than cudaHostAlloc
    unsigned flags;
    const char* meaning;
};

const Row rows[] = {
    {false, cudaHostAllocDefault, "what cudaMallocHost does"},
    {false, cudaHostAllocPortable, "pinned for every CUDA context, not only this one"},
    {false, cudaHostAllocMapped, "mapped into the device's address space"},
    {false, cudaHostAllocWriteCombined, "uncached on the CPU: see `write_combined`"},
    {false, cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined,
     "PyCUDA's PORTABLE|DEVICEMAP|WRITECOMBINED"},
    {true, cudaHostRegisterDefault, "pins memory malloc returned"},
    {true, cudaHostRegisterPortable, "as Portable above"},
    {true, cudaHostRegisterMapped, "as Mapped above"},
    {true, cudaHostRegisterReadOnly, "the device will only read it"},
};

}  // namespace
