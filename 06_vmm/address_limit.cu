// Section address_limit: out of memory with memory free. Under an address-space limit (ulimit -v,
// a container's: RLIMIT_AS), which CUDA calls fail while the GPU is nearly empty, and why?
// Built alone (mkdir -p build first), then ./build/address_limit [a limit in MiB]:
//   nvcc -std=c++17 -I. 06_vmm/address_limit.cu common/standalone.cu -o build/address_limit
//   (or in 06_vmm/: nvcc -std=c++17 -I.. address_limit.cu ../common/standalone.cu
//       -o ../build/address_limit)  (on the same line)
#include "common/check.hpp"
#include "common/driver.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// What each call answered in a process whose address space was limited to `limit` bytes (0: no
// limit of ours), and the process's address space (VmSize) before and after its first CUDA call.
struct Found {
    std::size_t limit = 0;
    std::size_t before = 0, after = 0;  // VmSize, bytes
    bool limit_set = false;
    cudaError_t context = cudaErrorUnknown;  // cudaSetDevice + cudaFree(nullptr)
    std::size_t free = 0, total = 0;         // cudaMemGetInfo, once there is a context
    cudaError_t device = cudaErrorUnknown, pinned = cudaErrorUnknown,
                managed = cudaErrorUnknown;  // cudaMalloc, cudaMallocHost, cudaMallocManaged
    CUresult reserve = CUDA_ERROR_UNKNOWN;   // cuMemAddressReserve of 64 GiB
};

constexpr std::size_t block = std::size_t{256} << 20;  // each allocation: 256 MiB
constexpr std::size_t range = std::size_t{64} << 30;   // the address range reserved: 64 GiB

std::size_t address_space();
cudaError_t try_allocate(cudaError_t (*allocate)(void**, std::size_t),
                         cudaError_t (*release)(void*));

Found walkthrough(int device, std::size_t limit) {
    Found found;
    found.limit = limit;
    // 1. The address space the process has before any CUDA call, and, where asked, the limit a
    //    container or `ulimit -v` would set: no mapping may take the process above it.
    found.before = address_space();
    if (limit != 0) {
        const rlimit lowered{limit, limit};
        found.limit_set = setrlimit(RLIMIT_AS, &lowered) == 0;
    }
    // 2. The first calls: the driver loads, and the context reserves the address ranges that
    //    unified addressing needs. Under a low limit this fails, with no GPU memory in use.
    found.context = cudaSetDevice(device);
    if (found.context == cudaSuccess) found.context = cudaFree(nullptr);
    found.after = address_space();
    if (found.context != cudaSuccess) return found;
    // 3. What the GPU has free: nearly all of it.
    CUDA_CHECK(cudaMemGetInfo(&found.free, &found.total));
    // 4. Allocations, each given back at once: device memory, pinned host memory, managed
    //    memory, and an address range of the driver's virtual memory management API.
    found.device = try_allocate([](void** p, std::size_t n) { return cudaMalloc(p, n); },
                                [](void* p) { return cudaFree(p); });
    found.pinned = try_allocate([](void** p, std::size_t n) { return cudaMallocHost(p, n); },
                                [](void* p) { return cudaFreeHost(p); });
    found.managed = try_allocate(
        [](void** p, std::size_t n) { return cudaMallocManaged(p, n, cudaMemAttachGlobal); },
        [](void* p) { return cudaFree(p); });
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    CUdeviceptr va = 0;
    found.reserve = cuMemAddressReserve(&va, range, 0, 0, 0);
    if (found.reserve == CUDA_SUCCESS) CU_CHECK(cuMemAddressFree(va, range));
    return found;
}

// VmSize of this process, bytes: all the address space it has mapped or reserved. Read into a
// buffer on the stack: under a tight limit, even a heap allocation may fail.
std::size_t address_space() {
    char text[8192] = {};
    const int fd = open("/proc/self/status", O_RDONLY);
    if (fd < 0) return 0;
    const ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    const char* line = got > 0 ? std::strstr(text, "VmSize:") : nullptr;
    return line == nullptr ? 0 : std::strtoull(line + 7, nullptr, 10) << 10;  // kB
}

// One allocation of `block` bytes and its release; what the allocation answered.
cudaError_t try_allocate(cudaError_t (*allocate)(void**, std::size_t),
                         cudaError_t (*release)(void*)) {
    void* p = nullptr;
    const cudaError_t answer = allocate(&p, block);
    if (answer == cudaSuccess) {
        CUDA_CHECK(release(p));
    } else {
        (void)cudaGetLastError();  // an answer, not a failure of the lesson
    }
    return answer;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main(int argc, char** argv) {
    const std::size_t limit = argc > 1 ? std::strtoull(argv[1], nullptr, 10) << 20 : 0;
    const Found f = walkthrough(0, limit);
    if (limit == 0) CUDA_CHECK(f.context);  // no limit: a failure is the machine's (no GPU: SKIP)
    const auto gib = [](std::size_t bytes) { return static_cast<double>(bytes) / (1 << 30); };
    if (limit != 0) {
        std::printf("RLIMIT_AS %.2f GiB: %s\n", gib(limit), f.limit_set ? "set" : "NOT set");
    }
    // The card's number: the address space the first CUDA calls took.
    std::printf(
        "VmSize %.2f GiB before the first CUDA call, %.2f GiB after: the context took "
        "%.2f GiB of address space\n",
        gib(f.before), gib(f.after), gib(f.after - f.before));
    std::printf("context: %s\n", cudaGetErrorName(f.context));
    if (f.context != cudaSuccess) return 0;
    std::printf("GPU memory free: %.1f of %.1f GiB\n", gib(f.free), gib(f.total));
    std::printf(
        "cudaMalloc 256 MiB -> %s\ncudaMallocHost 256 MiB -> %s\n"
        "cudaMallocManaged 256 MiB -> %s\ncuMemAddressReserve 64 GiB -> %s\n",
        cudaGetErrorName(f.device), cudaGetErrorName(f.pinned), cudaGetErrorName(f.managed),
        tutorial::driver_error_name(f.reserve));
    return 0;
}
#endif
