// Section `system_allocator`: can a kernel use memory from malloc, the stack or a global array,
// which CUDA never allocated? Only where the device can access pageable memory.
#include "common/check.hpp"
#include "common/child.hpp"
#include "common/report.hpp"
#include "sections.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int count = 1024;
int global_array[count];  // an ordinary C++ global, not __device__ or __managed__

// lesson:begin
__global__ void square_all(int* data, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        data[i] = i * i;
    }
}

// Runs the kernel on `data` and checks the result on the CPU. Returns the number of wrong
// values, or exits through CUDA_CHECK (code 1) if the kernel fails.
int square_and_check(int* data) {
    std::memset(data, 0, count * sizeof(int));
    square_all<<<4, 256>>>(data, count);
    CUDA_CHECK_LAUNCH_SYNC();
    int wrong = 0;
    for (int i = 0; i < count; ++i) wrong += data[i] != i * i;
    return wrong;
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

const char* const memory_kinds[] = {"malloc", "stack", "global"};

}  // namespace

// Child role: the kernel on one kind of system-allocated memory (args: device, kind).
int child_system_memory(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const std::string& kind = args.at(1);
    int stack_array[count];
    int* data = kind == "malloc"  ? static_cast<int*>(std::malloc(count * sizeof(int)))
                : kind == "stack" ? stack_array
                                  : global_array;
    std::printf("kernel on %s memory %p...\n", kind.c_str(), static_cast<void*>(data));
    const int wrong = square_and_check(data);
    std::printf("it ran: %d of %d values wrong\n", wrong, count);
    if (kind == "malloc") std::free(data);
    return wrong == 0 ? 0 : 3;
}

tutorial::Result run_system_allocator(tutorial::Context& ctx) {
    int pageable_access = 0;  // 1: the GPU can use memory the CPU's allocators hand out
    CUDA_CHECK(
        cudaDeviceGetAttribute(&pageable_access, cudaDevAttrPageableMemoryAccess, ctx.device));
    std::printf(
        "pageableMemoryAccess = %d: a kernel %s use memory from malloc, the stack or a plain\n"
        "global. Each kind is tried in its own child process, since a failure here is an\n"
        "illegal address that ends the child's CUDA context.\n\n",
        pageable_access ? 1 : 0, pageable_access ? "may" : "may NOT");
    int as_expected = 0;
    for (const char* kind : memory_kinds) {
        const tutorial::ChildResult child =
            tutorial::run_child("system_memory", {std::to_string(ctx.device), kind});
        tutorial::print_child_output(child);
        std::printf("The child %s.\n\n", child.describe().c_str());
        const bool faulted = child.failed_with("cudaErrorIllegalAddress");
        const bool worked = child.succeeded();
        as_expected += pageable_access ? worked : faulted;
    }
    std::printf(
        "%s.\nA kernel can use system-allocated memory only where the GPU can translate the\n"
        "CPU's addresses: with HMM (heterogeneous memory management: the open GPU kernel\n"
        "modules on a recent Linux kernel, which mirror the CPU's page tables) or with ATS on\n"
        "hardware-coherent systems such as Grace Hopper. Elsewhere, use cudaMallocManaged, or\n"
        "pin the memory with cudaHostRegister.\n",
        pageable_access ? "All three worked" : "All three failed with cudaErrorIllegalAddress");
    std::printf("\n");
    ctx.claim(tutorial::observed(
        pageable_access ? "pageableMemoryAccess = 1: kernels use malloc, stack and global memory"
                        : "pageableMemoryAccess = 0: a kernel on malloc, stack or global memory "
                          "fails with cudaErrorIllegalAddress",
        as_expected == 3, tutorial::format("%d of 3 kinds as predicted", as_expected),
        "the attribute and the driver disagree; the children's lines show what happened"));
    return ctx.verdict(as_expected == 3,
                       tutorial::format("%d of 3 kinds of system memory behaved as "
                                        "pageableMemoryAccess = %d predicts",
                                        as_expected, pageable_access ? 1 : 0));
}
