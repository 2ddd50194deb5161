// Section portable_pinned (2 or more GPUs): cudaHostAllocPortable asks that pinned memory count
// as pinned for every CUDA context. Under unified addressing every pinned allocation already is;
// checks/portable_pinned.cu measures whether the flag still changes anything.
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstdint>

namespace {

constexpr std::uint32_t seed = 31;

// Step 1. Two pinned buffers made while GPU `home` is current: one asks to count as pinned for
// every CUDA context (cudaHostAllocPortable), the other does not.
struct Pinned {
    std::uint32_t* portable;
    std::uint32_t* plain;
};

Pinned allocate_pinned(int home, std::size_t bytes) {
    Pinned p{nullptr, nullptr};
    CUDA_CHECK(cudaSetDevice(home));
    CUDA_CHECK(cudaHostAlloc(&p.portable, bytes, cudaHostAllocPortable));
    CUDA_CHECK(cudaHostAlloc(&p.plain, bytes, cudaHostAllocDefault));
    return p;
}

// Step 2. The flags each buffer reports it was allocated with (cudaHostAlloc's flag values); the
// Default buffer's also with another GPU current.
struct Flags {
    unsigned portable, plain, plain_elsewhere;
};

Flags host_flags(const Pinned& p, int other_gpu) {
    Flags f{0, 0, 0};
    CUDA_CHECK(cudaHostGetFlags(&f.portable, p.portable));
    CUDA_CHECK(cudaHostGetFlags(&f.plain, p.plain));
    CUDA_CHECK(cudaSetDevice(other_gpu));
    CUDA_CHECK(cudaHostGetFlags(&f.plain_elsewhere, p.plain));
    return f;
}

// Step 3. Any GPU copies from either of them into its own memory.
void copy_to(int gpu, std::uint32_t* device, const std::uint32_t* host, std::size_t bytes) {
    CUDA_CHECK(cudaSetDevice(gpu));
    CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, nullptr));
}

// Step 4. A kernel on `gpu` reads the buffer in place, then another writes it, which the CPU
// checks. The kernels use the host pointer as it is.
struct InPlace {
    std::size_t read_wrong;     // a kernel on this GPU read the buffer through its pointer
    std::size_t written_wrong;  // a kernel on this GPU wrote it; the CPU checked
};

InPlace use_in_place(int gpu, std::uint32_t* device, std::uint32_t* host, std::size_t count) {
    InPlace r{0, 0};
    CUDA_CHECK(cudaSetDevice(gpu));
    fill_on_host(host, count, seed);
    CUDA_CHECK(cudaMemcpy(device, host, count * sizeof *host, cudaMemcpyHostToDevice));
    r.read_wrong =
        mismatches_on_device(device, count, seed) + mismatches_on_device(host, count, seed);
    fill_on_device(host, count, seed + gpu + 1);  // the kernel writes through the host pointer
    r.written_wrong = mismatches_on_host(host, count, seed + gpu + 1);
    return r;
}

// Step 5. Pinned memory is freed with cudaFreeHost (here with GPU `home` current again, as
// the rest of the program expects).
void free_pinned(int home, const Pinned& p) {
    CUDA_CHECK(cudaSetDevice(home));
    CUDA_CHECK(cudaFreeHost(p.portable));
    CUDA_CHECK(cudaFreeHost(p.plain));
}

}  // namespace
