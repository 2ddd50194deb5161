// Section flags: every cudaHostAlloc and cudaHostRegister flag, what cudaHostGetFlags reports back,
// the device pointer of each allocation, and a kernel using it. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 02_pinned/flags.cu common/standalone.cu -o build/flags
//   (or in 02_pinned/: nvcc -std=c++17 -I.. flags.cu ../common/standalone.cu -o ../build/flags)
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// Pinned memory made either way: allocated pinned (cudaHostAlloc), or allocated by malloc and
// pinned where it is (cudaHostRegister). Each flag asks for something more.
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

// A kernel uses the memory through the address cudaHostGetDevicePointer gave: it writes values
// the CPU then reads, or, for memory the device may only read, reads values the CPU wrote.
// Returns the wrong ones.
std::size_t use_from_kernel(std::uint32_t* host, std::uint32_t* device_view, std::size_t count,
                            bool read_only, std::uint32_t pattern_seed) {
    if (read_only) {
        fill_on_host(host, count, pattern_seed);
        return mismatches_on_device(device_view, count, pattern_seed);
    }
    fill_on_device(device_view, count, pattern_seed);
    return mismatches_on_host(host, count, pattern_seed);
}

// Every flag, and what it asks for.
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

// What the walkthrough found for one row.
struct RowFound {
    bool tried;          // false: ReadOnly, where the device does not support it
    cudaError_t asked;   // cudaHostGetFlags (its entry covers cudaHostAlloc's ranges)
    unsigned reported;   // the flags it passed back
    bool same_address;   // cudaHostGetDevicePointer gave back the host pointer itself
    std::size_t wrong;   // values the kernel wrote (or read) wrongly
};

std::vector<RowFound> walkthrough(int device) {
    const std::size_t bytes = 1 << 20;
    const std::size_t count = bytes / sizeof(std::uint32_t);
    int read_only_supported = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&read_only_supported,
                                      cudaDevAttrHostRegisterReadOnlySupported, device));
    std::vector<RowFound> found;
    std::uint32_t seed = 100;
    for (const Row& row : rows) {
        RowFound r{};
        const bool read_only = row.registered && (row.flags & cudaHostRegisterReadOnly);
        r.tried = !read_only || read_only_supported == 1;
        if (r.tried) {
            // 1. Pin 1 MiB with the row's flags.
            std::uint32_t* host = pin(row.registered, row.flags, bytes);
            // 2. Ask for its flags (a refusal leaves its error as the last error: cleared), and
            //    for the address kernels use.
            r.asked = cudaHostGetFlags(&r.reported, host);
            if (r.asked != cudaSuccess) (void)cudaGetLastError();
            void* device_view = nullptr;
            CUDA_CHECK(cudaHostGetDevicePointer(&device_view, host, 0));
            r.same_address = device_view == host;
            // 3. A kernel uses it through that address; then it is given back.
            r.wrong = use_from_kernel(host, static_cast<std::uint32_t*>(device_view), count,
                                      read_only, seed++);
            unpin(row.registered, host);
        }
        found.push_back(r);
    }
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::vector<RowFound> found = walkthrough(0);
    for (std::size_t i = 0; i < found.size(); ++i) {
        const RowFound& r = found[i];
        std::printf("%s flags 0x%x: %s; cudaHostGetFlags %s 0x%x; %s address; %zu wrong\n",
                    rows[i].registered ? "cudaHostRegister" : "cudaHostAlloc", rows[i].flags,
                    r.tried ? "tried" : "not supported", cudaGetErrorName(r.asked), r.reported,
                    r.same_address ? "the host's" : "its own", r.wrong);
    }
    return 0;
}
#endif
