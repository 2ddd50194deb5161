// The course's check of exercise ex07_shareable (the task is in ../shareable.cu): the learner's
// buffer must be accepted by cudaIpcGetMemHandle, and a worker process that opens the handle must
// read what the owner wrote.
#include "common/check.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/patterns.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Written by the learner (exercises/shareable.cu).
void* allocate_shareable(std::size_t bytes);
void free_shareable(void* buffer);

namespace {

using tutorial::Context;
using tutorial::Result;

constexpr std::size_t count = std::size_t{4} << 20;  // 16 MiB
constexpr std::uint32_t seed = 21;

// The worker process: args are the device; the handle arrives on stdin.
int child_reader(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    cudaIpcMemHandle_t handle{};
    if (tutorial::read_input(&handle, sizeof(handle), 30.0) != tutorial::Input::received) {
        std::printf("no handle arrived\n");
        return 1;
    }
    void* pointer = nullptr;
    CUDA_CHECK(cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess));
    const std::uint64_t sum = sum_on_device(static_cast<const std::uint32_t*>(pointer), count);
    CUDA_CHECK(cudaIpcCloseMemHandle(pointer));
    std::printf("the worker's sum: %llu\n", static_cast<unsigned long long>(sum));
    return 0;
}

Result check(Context& ctx) {
    void* buffer = allocate_shareable(count * sizeof(std::uint32_t));
    fill_on_device(static_cast<std::uint32_t*>(buffer), count, seed);
    cudaIpcMemHandle_t handle{};
    const cudaError_t exported = cudaIpcGetMemHandle(&handle, buffer);
    cudaGetLastError();  // a refused export is an answer here, not an error to carry on
    ctx.claim(tutorial::documented(
        "handle_exported", "cudaIpcGetMemHandle exports the buffer", exported == cudaSuccess,
        std::string("cudaIpcGetMemHandle returned ") + cudaGetErrorName(exported),
        "the buffer comes from an allocator legacy IPC cannot export. First step: allocate it "
        "with cudaMalloc (and free it with cudaFree)",
        tutorial::Entry{"Programming Guide, Interprocess Communication", "cudaIpcGetMemHandle",
                        "can"}));
    bool read = false;
    if (exported == cudaSuccess) {
        const std::string bytes(reinterpret_cast<const char*>(&handle), sizeof(handle));
        const tutorial::ChildResult result =
            tutorial::run_child("reader", {std::to_string(ctx.device)}, bytes, 60.0);
        tutorial::print_child_output(result);
        const std::string wanted = "the worker's sum: " + std::to_string(pattern_sum(count, seed));
        read = result.succeeded() && result.output.find(wanted) != std::string::npos;
        ctx.claim(tutorial::documented(
            "worker_reads_owner_values", "a worker process reads the values the owner wrote", read,
            read ? "its sum is the owner's" : "it " + result.describe(),
            "the worker did not read what the owner wrote. First "
            "step: fill and export the same buffer",
            tutorial::Entry{"Programming Guide, Interprocess "
                            "Communication",
                            "cudaIpcGetMemHandle cudaIpcOpenMemHandle", "can"}));
    }
    free_shareable(buffer);
    return ctx.verdict(read, read ? "exported, opened and read by another process"
                                  : "not shared with another process");
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex07_shareable",
        "Exercise (chapter 07_ipc): memory legacy IPC can export",
        {{"check", "allocate_shareable: exported, opened by a worker, read", {}, true, check}},
        {{"reader", child_reader}},
        "07_ipc/exercises/shareable.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
