// Section `pitfalls` (fault demo): IPC calls used the wrong way, each with the error it returns.
#include "common/check.hpp"
#include "common/child.hpp"
#include "common/driver.hpp"
#include "common/report.hpp"
#include "common/vmm.hpp"
#include "sections.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tutorial;

// Child role: every misuse once, one line each. Exit 0 when each call returned an error (and the
// first one exactly cudaErrorDeviceUninitialized, as documented for the H100/H200).
int child_ipc_misuse(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    void* buffer = nullptr;
    void* managed = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer, 1 << 20));
    CUDA_CHECK(cudaMallocManaged(&managed, 1 << 20));
    cudaIpcMemHandle_t handle{};
    CUDA_CHECK(cudaIpcGetMemHandle(&handle, buffer));

    void* opened = nullptr;
    const cudaError_t own = cudaIpcOpenMemHandle(&opened, handle, cudaIpcMemLazyEnablePeerAccess);
    cudaIpcMemHandle_t unused{};
    const cudaError_t interior = cudaIpcGetMemHandle(&unused, static_cast<char*>(buffer) + 4096);
    const cudaError_t of_managed = cudaIpcGetMemHandle(&unused, managed);
    (void)cudaGetLastError();

    const auto cuMemExportToShareableHandle = DRIVER_FUNCTION(cuMemExportToShareableHandle);
    const auto cuGetErrorName = DRIVER_FUNCTION(cuGetErrorName);
    const std::size_t bytes = vmm_granularity(device);
    const CUmemGenericAllocationHandle memory = vmm_create(vmm_properties(device), bytes);
    int fd = -1;
    const CUresult exported =
        cuMemExportToShareableHandle(&fd, memory, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    const char* exported_name = "?";
    cuGetErrorName(exported, &exported_name);
    vmm_release(memory);

    std::printf("%-58s -> %s\n", "cudaIpcOpenMemHandle in the process that made the handle",
                cudaGetErrorName(own));
    std::printf("%-58s -> %s\n", "cudaIpcGetMemHandle(4 KiB into a cudaMalloc allocation)",
                cudaGetErrorName(interior));
    std::printf("%-58s -> %s\n", "cudaIpcGetMemHandle(managed memory)",
                cudaGetErrorName(of_managed));
    std::printf("%-58s -> %s\n", "cuMemExportToShareableHandle without a requested handle type",
                exported_name);
    CUDA_CHECK(cudaFree(buffer));
    CUDA_CHECK(cudaFree(managed));
    const bool as_documented = own == cudaErrorDeviceUninitialized && interior != cudaSuccess &&
                               of_managed != cudaSuccess && exported != CUDA_SUCCESS;
    return as_documented ? 0 : 3;
}

tutorial::Result run_pitfalls(tutorial::Context& ctx) {
    std::printf("Each call below is used the wrong way, in a child process:\n");
    const ChildResult child = run_child("ipc_misuse", {std::to_string(ctx.device)});
    print_child_output(child);
    std::printf("The child %s.\n", child.describe().c_str());
    std::printf(
        "\nNot provoked here: a master that frees memory while a worker still has it open. For\n"
        "a legacy IPC handle the result is undefined; a VMM import holds its own reference, so\n"
        "the memory stays allocated until the importer releases it, but the master no longer\n"
        "knows about it. Either way, have the workers close their handles (and say so) before\n"
        "the master frees. And from chapter 03: a worker made with fork() but no exec() cannot\n"
        "use CUDA at all.\n");
    return ctx.verdict(child.succeeded(),
                       "each misuse returned an error, opening a handle in its own process "
                       "exactly cudaErrorDeviceUninitialized");
}
