// Checks of section system_allocator: runs ../system_allocator.cu's kernel on malloc, stack and
// global memory, each in a child process whatever pageableMemoryAccess says (a failure ends the
// child's context), then the walkthrough itself, and judges what pageableMemoryAccess promises:
// where it is 1, the kernels on system memory; everywhere, the kernel on managed memory.
#include "03_managed/system_allocator.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Child role: the kernel on one kind of memory (args: device, kind: malloc, stack or global).
int child_system_memory(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const std::string& kind = args.at(1);
    int stack_array[count];
    int* data = global_array;
    if (kind == "malloc") data = static_cast<int*>(std::malloc(count * sizeof(int)));
    if (kind == "stack") data = stack_array;
    std::printf("kernel on %s memory %p...\n", kind.c_str(), static_cast<void*>(data));
    const int wrong = square_and_check(data);
    std::printf("it ran: %d of %d values wrong\n", wrong, count);
    if (kind == "malloc") std::free(data);
    return wrong == 0 ? 0 : 3;
}

namespace {

const char* const memory_kinds[] = {"malloc", "stack", "global"};

// The three kinds of system memory, each in a child: how many worked, and how many stopped with
// cudaErrorIllegalAddress.
void try_system_memory(int device, int& worked, int& faulted) {
    worked = 0;
    faulted = 0;
    for (const char* kind : memory_kinds) {
        const tutorial::ChildResult child =
            tutorial::run_child("system_memory", {std::to_string(device), kind});
        tutorial::print_child_output(child);
        std::printf("The child %s.\n\n", child.describe().c_str());
        worked += child.succeeded() ? 1 : 0;
        faulted += child.failed_with("cudaErrorIllegalAddress") ? 1 : 0;
    }
}

// The claim on system memory. Where pageableMemoryAccess = 1 the attribute's entry promises it:
// the device supports coherent access to pageable memory without cudaHostRegister (the Guide,
// N.1.6, names malloc, the stack and a global). Where it is 0 no entry names what a kernel on
// such memory gets: what this driver did is observed. Returns whether the promise held (true
// where there is none).
bool claim_system_memory(tutorial::Context& ctx, int pageable_access, int worked, int faulted,
                         const Found& found) {
    if (pageable_access) {
        // In the children, and in this process (the walkthrough's kernels on the same kinds).
        const bool here = found.on_malloc == 0 && found.on_stack == 0 && found.on_global == 0;
        return ctx.claim(tutorial::documented(
            "system_memory_in_kernels",
            "at pageableMemoryAccess = 1 kernels use malloc, stack and global memory",
            worked == 3 && here,
            tutorial::format("%d of 3 kinds worked in a child; in this process %d, %d and %d "
                             "values wrong on malloc, stack and global memory",
                             worked, found.on_malloc, found.on_stack, found.on_global),
            "the GPU could not translate the CPU's addresses: HMM is off (the proprietary "
            "kernel modules, an older Linux kernel) although the device reports the attribute",
            tutorial::Entry{"Runtime API reference: cudaDevAttrPageableMemoryAccess",
                            "pageable without cudaHostRegister", "supports"}));
    }
    ctx.claim(tutorial::observed(
        "system_memory_in_kernels",
        "at pageableMemoryAccess = 0 a kernel on malloc, stack or global memory gets "
        "cudaErrorIllegalAddress",
        faulted == 3, tutorial::format("%d of 3 kinds failed that way", faulted),
        "the attribute at 0 only withholds the promise that a kernel can use such memory; no "
        "entry names what happens when one tries"));
    return true;
}

}  // namespace

tutorial::Result run_system_allocator(tutorial::Context& ctx) {
    int pageable_access = 0;
    CUDA_CHECK(
        cudaDeviceGetAttribute(&pageable_access, cudaDevAttrPageableMemoryAccess, ctx.device));
    std::printf(
        "pageableMemoryAccess = %d: %s\n"
        "Each kind is tried in its own child process, since a failure here is an illegal\n"
        "address that ends the child's CUDA context.\n\n",
        pageable_access ? 1 : 0,
        pageable_access ? "the device supports coherent access to pageable memory (its entry),\n"
                          "so kernels may use memory from malloc, the stack or a plain global."
                        : "nothing promises that a kernel can use memory from malloc,\n"
                          "the stack or a plain global.");
    int worked = 0;
    int faulted = 0;
    try_system_memory(ctx.device, worked, faulted);
    const Found found = walkthrough(ctx.device);
    std::printf(
        "The walkthrough, in this process: %s; the kernel on cudaMallocManaged memory: %d of %d\n"
        "values wrong.\n\n"
        "Of the three kinds of system memory, %d worked and %d failed with\n"
        "cudaErrorIllegalAddress. A kernel can use system-allocated memory where the GPU can\n"
        "translate the CPU's addresses: with HMM (heterogeneous memory management: the open GPU\n"
        "kernel modules on a recent Linux kernel, which mirror the CPU's page tables) or with ATS\n"
        "on hardware-coherent systems such as Grace Hopper. Elsewhere, use cudaMallocManaged, or\n"
        "pin the memory with cudaHostRegister.\n\n",
        found.pageable_memory_access ? "malloc, stack and global memory tried too"
                                     : "system memory not tried (not promised here)",
        found.on_managed, count, worked, faulted);
    const bool system_held = claim_system_memory(ctx, pageable_access, worked, faulted, found);
    ctx.claim(tutorial::documented(
        "managed_in_kernels",
        "a kernel uses cudaMallocManaged memory, whatever pageableMemoryAccess says",
        found.on_managed == 0, tutorial::format("%d of %d values wrong", found.on_managed, count),
        "managed memory is broken on this system",
        tutorial::Entry{"Runtime API reference: cudaMallocManaged", "CPU GPUs", "is valid"}));
    // Where pageableMemoryAccess = 1 the verdict rests on the kernels on system memory too; where
    // it is 0, what they did is observed, and only the managed memory is judged.
    const std::string system_memory =
        pageable_access ? tutorial::format("%d of 3 kinds of system memory worked", worked)
                        : "nothing promised for system memory";
    return ctx.verdict(found.on_managed == 0 && system_held,
                       tutorial::format("pageableMemoryAccess = %d: %s; the kernel on managed "
                                        "memory %s",
                                        pageable_access ? 1 : 0, system_memory.c_str(),
                                        found.on_managed == 0 ? "worked" : "FAILED"));
}

TUTORIAL_SECTION(system_allocator, run_system_allocator);
TUTORIAL_CHILD(system_memory, child_system_memory);
