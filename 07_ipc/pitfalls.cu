// Section `pitfalls` (fault demo): IPC calls used the wrong way, each with the error it returns.
#include "common/check.hpp"
#include "common/child.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"
#include "helpers/ipc_common.hpp"
#include "sections.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::ChildResult;
using tutorial::run_child;

namespace {

struct LegacyMisuse {
    cudaError_t own;       // opening a handle in the process that made it
    cudaError_t interior;  // a handle for an address inside an allocation
    cudaIpcMemHandle_t interior_handle;
    cudaError_t of_managed;  // a handle for managed memory
};

// lesson:begin
// Legacy IPC handles are for whole cudaMalloc allocations, opened by another process. Each call
// below steps outside that; what each returns is the lesson, so none is checked.
LegacyMisuse legacy_misuses(void* buffer, void* managed) {
    LegacyMisuse m{};
    cudaIpcMemHandle_t handle{};
    CUDA_CHECK(cudaIpcGetMemHandle(&handle, buffer));
    void* opened = nullptr;
    m.own = cudaIpcOpenMemHandle(&opened, handle, cudaIpcMemLazyEnablePeerAccess);
    if (m.own == cudaSuccess) CUDA_CHECK(cudaIpcCloseMemHandle(opened));  // a driver that allows it
    m.interior = cudaIpcGetMemHandle(&m.interior_handle, static_cast<char*>(buffer) + 4096);
    cudaIpcMemHandle_t unused{};
    m.of_managed = cudaIpcGetMemHandle(&unused, managed);
    (void)cudaGetLastError();  // the refusals also left their error as the last one
    return m;
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

}  // namespace

// Child role: opens the handle it is given and prints the first value it finds there.
int child_open_and_peek(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    std::string hex;
    cudaIpcMemHandle_t handle{};
    if (tutorial::read_input_line(hex, task_timeout_s) != tutorial::Input::received ||
        !from_hex(hex, &handle, sizeof handle)) {
        return 4;
    }
    void* opened = nullptr;
    CUDA_CHECK(cudaIpcOpenMemHandle(&opened, handle, cudaIpcMemLazyEnablePeerAccess));
    std::uint32_t first = 0;
    CUDA_CHECK(cudaMemcpy(&first, opened, sizeof first, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaIpcCloseMemHandle(opened));
    std::printf("first value there: %u\n", first);
    return 0;
}

namespace {

// The misuses that need no buffer of the child's: VMM memory through the wrong calls, and an
// event for another process created without cudaEventDisableTiming.
struct Refusals {
    const char* exported;  // cuMemExportToShareableHandle with no requested handle type
    cudaError_t of_vmm;    // cudaIpcGetMemHandle on mapped cuMemCreate memory
    cudaError_t timed_created, timed_handle;
};

Refusals vmm_and_event_refusals(int device) {
    const auto cuMemExportToShareableHandle = DRIVER_FUNCTION(cuMemExportToShareableHandle);
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);  // not exportable
    const std::size_t bytes = tutorial::vmm_granularity(prop);
    const CUmemGenericAllocationHandle memory = tutorial::vmm_create(prop, bytes);
    int fd = -1;
    const CUresult exported =
        cuMemExportToShareableHandle(&fd, memory, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    // The Virtual Memory Management appendix: cuMemCreate memory is not for the legacy calls,
    // even mapped and usable like cudaMalloc memory.
    const CUdeviceptr vmm_address = tutorial::vmm_reserve(bytes, 0);
    tutorial::vmm_map(vmm_address, bytes, memory);
    tutorial::vmm_set_access(vmm_address, bytes, device);
    cudaIpcMemHandle_t unused{};
    const cudaError_t of_vmm = cudaIpcGetMemHandle(&unused, reinterpret_cast<void*>(vmm_address));
    (void)cudaGetLastError();
    tutorial::vmm_unmap(vmm_address, bytes);
    tutorial::vmm_free(vmm_address, bytes);
    tutorial::vmm_release(memory);

    // An event for another process: the guide asks for cudaEventDisableTiming along with
    // cudaEventInterprocess. Here it is left out.
    cudaEvent_t timed = nullptr;
    const cudaError_t timed_created = cudaEventCreateWithFlags(&timed, cudaEventInterprocess);
    (void)cudaGetLastError();
    cudaError_t timed_handle = cudaSuccess;
    if (timed_created == cudaSuccess) {  // then the handle is what may be refused
        cudaIpcEventHandle_t event_handle{};
        timed_handle = cudaIpcGetEventHandle(&event_handle, timed);
        (void)cudaGetLastError();
        CUDA_CHECK(cudaEventDestroy(timed));
    }

    return {tutorial::driver_error_name(exported), of_vmm, timed_created, timed_handle};
}

}  // namespace

// Child role: every misuse once, one line each. Exit 0 when each documented refusal happened.
// Two lines show what this driver does outside the reference's contract (a handle opened by its
// own process; a handle made from an interior pointer, where the reference asks for the base
// pointer): reported, never part of the exit code.
int child_ipc_misuse(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    void* buffer = nullptr;
    void* managed = nullptr;
    // 2 MiB: a smaller cudaMalloc may share its block with other allocations, and a handle to it
    // would share them too (the Guide recommends multiples of 2 MiB for IPC).
    constexpr std::size_t bytes = std::size_t{2} << 20;
    CUDA_CHECK(cudaMalloc(&buffer, bytes));
    CUDA_CHECK(cudaMallocManaged(&managed, bytes));
    // Seed 5: the values looked for below are not 0, which fresh memory may hold anyway.
    fill_on_device(static_cast<std::uint32_t*>(buffer), bytes / 4, 5);
    const LegacyMisuse m = legacy_misuses(buffer, managed);
    const cudaError_t own = m.own;
    const cudaError_t interior = m.interior;
    const cudaIpcMemHandle_t interior_handle = m.interior_handle;
    const cudaError_t of_managed = m.of_managed;

    const Refusals refused = vmm_and_event_refusals(device);

    std::printf("%-58s -> %s\n", "cudaIpcOpenMemHandle in the process that made the handle",
                cudaGetErrorName(own));
    std::printf("%-58s -> %s\n", "cudaIpcGetMemHandle(4 KiB into a cudaMalloc allocation)",
                cudaGetErrorName(interior));
    // Where does that handle lead? Another process opens it and looks at the first value.
    // pattern(i, 5) differs for every element, so the value tells which one it is.
    const ChildResult peek = run_child("open_and_peek", {args.at(0)},
                                       to_hex(&interior_handle, sizeof interior_handle) + "\n");
    const std::size_t at = peek.output.find("first value there: ");
    const unsigned long long first =
        at == std::string::npos ? 1 : std::strtoull(peek.output.c_str() + at + 19, nullptr, 10);
    const bool offset_lost = peek.succeeded() && first == pattern(0, 5);
    std::printf("%-58s -> %s\n", "  ...opened in another process, it points to",
                !peek.succeeded() ? "(the opener failed)"
                : offset_lost     ? "the start of the allocation: the 4 KiB offset is lost"
                : first == pattern(1024, 5) ? "the interior address"
                                            : "somewhere unexpected");
    std::printf("%-58s -> %s\n", "cudaIpcGetMemHandle(managed memory)",
                cudaGetErrorName(of_managed));
    std::printf("%-58s -> %s\n", "cuMemExportToShareableHandle without a requested handle type",
                refused.exported);
    std::printf("%-58s -> %s\n", "cudaIpcGetMemHandle(mapped cuMemCreate memory)",
                cudaGetErrorName(refused.of_vmm));
    std::printf("%-58s -> %s\n", "cudaEventCreateWithFlags(cudaEventInterprocess alone)",
                cudaGetErrorName(refused.timed_created));
    if (refused.timed_created == cudaSuccess) {
        std::printf("%-58s -> %s\n", "  ...cudaIpcGetEventHandle on that event",
                    cudaGetErrorName(refused.timed_handle));
    }
    CUDA_CHECK(cudaFree(buffer));
    CUDA_CHECK(cudaFree(managed));
    const bool timed_refused =
        refused.timed_created != cudaSuccess || refused.timed_handle != cudaSuccess;
    (void)offset_lost;  // reported above, outside the contract
    const bool as_documented = of_managed != cudaSuccess &&
                               std::string(refused.exported).rfind("CUDA_ERROR", 0) == 0 &&
                               refused.of_vmm != cudaSuccess && timed_refused;
    return as_documented ? 0 : 3;
}

tutorial::Result run_pitfalls(tutorial::Context& ctx) {
    std::printf("Each call below is used the wrong way, in a child process:\n");
    const ChildResult child = run_child("ipc_misuse", {std::to_string(ctx.device)});
    tutorial::print_child_output(child);
    std::printf("The child %s.\n", child.describe().c_str());
    std::printf(
        "\nNot provoked here: a master that frees memory while a worker still has it open. For\n"
        "a legacy IPC handle the result is undefined; a VMM import holds its own reference, so\n"
        "the memory stays allocated until the importer releases it, but the master no longer\n"
        "knows about it. Either way, have the workers close their handles (and say so) before\n"
        "the master frees. And from chapter 03: a worker made with fork() but no exec() cannot\n"
        "use CUDA at all.\n\n");
    const std::string own = tutorial::child_answer(child, "cudaIpcOpenMemHandle in the process");
    const std::string interior = tutorial::child_answer(child, "...opened in another process");
    const std::string managed =
        tutorial::child_answer(child, "cudaIpcGetMemHandle(managed memory)");
    const std::string vmm = tutorial::child_answer(child, "cuMemExportToShareableHandle without");
    // Neither case is in the Runtime API reference's contract: cudaIpcGetMemHandle takes the
    // allocation's base pointer, and nothing is said of a process opening its own handle.
    std::printf(
        "Outside the reference's contract, reported and not judged (observed on %s): the\n"
        "process that made a handle opening it got %s; a handle made from an interior pointer\n"
        "(the reference asks for the base pointer) led another process to %s.\n\n",
        tutorial::this_driver().c_str(), own.c_str(), interior.c_str());
    ctx.claim(tutorial::observed(
        "memory that cannot be shared is refused: managed memory, VMM memory with no handle type",
        managed.rfind("cuda", 0) == 0 && managed != "cudaSuccess" &&
            vmm.rfind("CUDA_ERROR", 0) == 0,
        "managed: " + managed + "; VMM: " + vmm, "this driver exported one of them"));
    const std::string legacy_vmm =
        tutorial::child_answer(child, "cudaIpcGetMemHandle(mapped cuMemCreate");
    ctx.claim(tutorial::observed(
        "cuMemCreate memory cannot be shared through the legacy cudaIpc calls, even mapped",
        legacy_vmm.rfind("cuda", 0) == 0 && legacy_vmm != "cudaSuccess", "it got " + legacy_vmm,
        "this driver made a legacy handle for VMM memory"));
    const std::string created = tutorial::child_answer(child, "cudaEventCreateWithFlags(");
    const std::string event = created == "cudaSuccess"
                                  ? tutorial::child_answer(child, "...cudaIpcGetEventHandle")
                                  : created;
    ctx.claim(tutorial::observed(
        "an event for another process needs cudaEventDisableTiming beside cudaEventInterprocess",
        event.rfind("cuda", 0) == 0 && event != "cudaSuccess",
        (created == "cudaSuccess" ? "created, then the handle: " : "creating it: ") + event,
        "this driver shared a timing event"));
    return ctx.verdict(child.succeeded(),
                       "managed memory, VMM memory and a timing event were refused, as the "
                       "reference says");
}
