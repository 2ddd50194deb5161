// The course's check of exercise ex07_share (the task is in ../share.cu): a worker process,
// given only the learner's handle, must double the owner's values in place and close its
// mapping.
#include "common/check.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Written by the learner (exercises/share.cu).
cudaIpcMemHandle_t share(void* device_buffer);
void worker(const cudaIpcMemHandle_t& handle, std::size_t count);

namespace {

using tutorial::Context;
using tutorial::Result;

constexpr std::size_t count = std::size_t{16} << 20;  // 64 MiB

// The worker process: args are the device; the handle arrives on stdin. After worker() returns,
// opening the handle again and closing it once must unmap it: the open is reference counted, so
// a mapping the learner left open would survive.
int child_worker(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    cudaIpcMemHandle_t handle{};
    if (tutorial::read_input(&handle, sizeof(handle), 30.0) != tutorial::Input::received) {
        std::printf("no handle arrived\n");
        return 1;
    }
    worker(handle, count);
    void* pointer = nullptr;
    const cudaError_t opened =
        cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess);
    if (opened != cudaSuccess) {
        std::printf("the handle does not open: %s\n", cudaGetErrorName(opened));
        return 0;
    }
    CUDA_CHECK(cudaIpcCloseMemHandle(pointer));
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    std::printf("after worker(): its mapping %s\n",
                attributes.type == cudaMemoryTypeDevice ? "is still open" : "was closed");
    return 0;
}

Result check(Context& ctx) {
    std::uint32_t* buffer = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer, count * sizeof(std::uint32_t)));
    fill_on_device(buffer, count, 5);
    const cudaIpcMemHandle_t handle = share(buffer);
    const std::string bytes(reinterpret_cast<const char*>(&handle), sizeof(handle));
    const tutorial::ChildResult result =
        tutorial::run_child("worker", {std::to_string(ctx.device)}, bytes, 60.0);
    tutorial::print_child_output(result);
    const std::size_t wrong = mismatches_on_device(buffer, count, 5, {2, 0});
    CUDA_CHECK(cudaFree(buffer));

    ctx.claim(tutorial::documented(
        "worker_doubled_in_place", "the worker process doubled every value of the owner's buffer", wrong == 0,
        std::to_string(wrong) + " of " + std::to_string(count) +
            " values not doubled; the "
            "worker " +
            result.describe(),
        "the worker never reached the buffer. First step: in share(), cudaIpcGetMemHandle; in "
        "worker(), cudaIpcOpenMemHandle, the kernel, cudaDeviceSynchronize",
        tutorial::Entry{"Programming Guide, Interprocess Communication",
                        "cudaIpcGetMemHandle cudaIpcOpenMemHandle", "can"}));
    const bool closed = result.output.find("its mapping was closed") != std::string::npos;
    // The open is reference counted and the mapping goes when the count reaches 0 (the
    // cudaIpcOpenMemHandle and cudaIpcCloseMemHandle entries), and a pointer that is no longer
    // mapped is not device memory to cudaPointerGetAttributes.
    ctx.claim(tutorial::documented(
        "worker_closed_mapping", "the worker closed the mapping it opened", closed,
        closed ? "closed" : "not closed (or never opened)",
        "the mapping stays until the process ends. First step: cudaIpcCloseMemHandle on the "
        "worker's pointer once its kernel is done",
        tutorial::Entry{"Runtime API reference: cudaIpcCloseMemHandle", "count reaches",
                        "unmaps"}));
    return ctx.verdict(wrong == 0 && closed && result.succeeded(),
                       std::to_string(count - wrong) + " of " + std::to_string(count) +
                           " values doubled by another process in place");
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex07_share",
        "Exercise (chapter 07_ipc): a worker process uses the owner's buffer",
        {{"check", "share and worker: values doubled in place, mapping closed", {}, true, check}},
        {{"worker", child_worker}},
        "07_ipc/exercises/share.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
