// The course's check of exercise ex07_host_pool (the task is in ../host_pool.cu): the learner's
// pool must be pinned host memory that exports as a file descriptor, and a worker process that
// imports it and its block must double every value the owner wrote, in place.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/patterns.hpp"
#include "common/text.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Written by the learner (exercises/host_pool.cu).
cudaError_t create_shareable_host_pool(int device, cudaMemPool_t* pool);
void let_this_gpu_use(cudaMemPool_t imported, int device);

namespace {

using tutorial::Context;
using tutorial::format;
using tutorial::Result;

constexpr std::size_t count = std::size_t{4} << 20;  // 16 MiB
constexpr std::uint32_t seed = 29;

__global__ void double_values(std::uint32_t* data, std::size_t n) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] *= 2;
    }
}

// The worker process (args: the device): the pool's descriptor is its descriptor
// child_passed_fd, the block's export data arrives on stdin. It imports the pool, lets the
// learner's code prepare its GPU, imports the block, doubles it with a kernel and frees its
// import before it ends (the importer frees first).
int child_doubler(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    cudaMemPoolPtrExportData data{};
    if (tutorial::read_input(&data, sizeof data, 30.0) != tutorial::Input::received) {
        std::printf("no export data arrived\n");
        return 1;
    }
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolImportFromShareableHandle(
        &pool, reinterpret_cast<void*>(static_cast<std::uintptr_t>(tutorial::child_passed_fd)),
        cudaMemHandleTypePosixFileDescriptor, 0));
    close(tutorial::child_passed_fd);
    let_this_gpu_use(pool, device);
    void* block = nullptr;
    CUDA_CHECK(cudaMemPoolImportPointer(&block, pool, &data));
    double_values<<<512, 256>>>(static_cast<std::uint32_t*>(block), count);
    CUDA_CHECK_LAUNCH_SYNC();
    CUDA_CHECK(cudaFree(block));
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    std::printf("the worker doubled the block and freed its import\n");
    return 0;
}

// What the exercise needs of the machine ("" where it has it).
std::string why_not_here(int device) {
    if (tutorial::device_attribute(device, cudaDevAttrHostNumaMemoryPoolsSupported) != 1) {
        return "this device has no pools of host NUMA memory";
    }
    if ((tutorial::device_attribute(device, cudaDevAttrMemoryPoolSupportedHandleTypes) &
         cudaMemHandleTypePosixFileDescriptor) == 0) {
        return "this device's pools cannot be exported as file descriptors";
    }
    if (tutorial::device_attribute(device, cudaDevAttrHostNumaId) < 0) {
        return "the host names no NUMA node for this GPU (cudaDevAttrHostNumaId = -1)";
    }
    return "";
}

// The owner's side: the learner's pool, a block from it filled by the CPU, the pool exported and
// then the block. Each step says what it got.
struct Owner {
    cudaError_t created = cudaErrorUnknown;
    bool host_memory = false;
    cudaError_t exported = cudaErrorUnknown;
    cudaMemPool_t pool = nullptr;
    std::uint32_t* block = nullptr;
    int fd = -1;
    cudaMemPoolPtrExportData data{};
};

Owner share_a_block(int device) {
    Owner o;
    o.created = create_shareable_host_pool(device, &o.pool);
    (void)cudaGetLastError();  // a refused pool is an answer here
    if (o.created != cudaSuccess) return o;
    CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&o.block),
                                       count * sizeof(std::uint32_t), o.pool, nullptr));
    CUDA_CHECK(cudaStreamSynchronize(nullptr));
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, o.block));
    o.host_memory = attributes.type != cudaMemoryTypeDevice;  // the CPU may fill it
    if (!o.host_memory) return o;
    fill_on_host(o.block, count, seed);
    o.exported = cudaMemPoolExportToShareableHandle(&o.fd, o.pool,
                                                    cudaMemHandleTypePosixFileDescriptor, 0);
    if (o.exported == cudaSuccess) o.exported = cudaMemPoolExportPointer(&o.data, o.block);
    (void)cudaGetLastError();
    return o;
}

std::string owner_text(const Owner& o) {
    if (o.created != cudaSuccess) {
        return format("cudaMemPoolCreate returned %s", cudaGetErrorName(o.created));
    }
    if (!o.host_memory) return "the pool's memory is not host memory";
    return format("the export returned %s", cudaGetErrorName(o.exported));
}

// The values of the owner's block that are not twice the pattern, counted by its CPU.
std::size_t not_doubled(const std::uint32_t* data) {
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) wrong += data[i] != 2 * pattern(i, seed);
    return wrong;
}

Result check(Context& ctx) {
    if (const std::string why = why_not_here(ctx.device); !why.empty()) return ctx.skip(why);
    Owner o = share_a_block(ctx.device);
    const bool shareable = o.created == cudaSuccess && o.host_memory && o.exported == cudaSuccess;
    ctx.claim(tutorial::documented(
        "pool_exported",
        "the pool is pinned host memory, and exports as a descriptor with its block's data",
        shareable, shareable ? "exported" : owner_text(o),
        "the pool was refused its handle type: a pool at cudaMemLocationTypeHost may have none. "
        "First step: TODO 1, the pool at cudaMemLocationTypeHostNuma, on the node "
        "cudaDevAttrHostNumaId names",
        tutorial::Entry{"Runtime API reference: cudaMemPoolExportToShareableHandle",
                        "recipient cudaMemPoolImportFromShareableHandle", "can"}));
    std::size_t wrong = count;
    if (shareable) {
        tutorial::ChildProcess worker("doubler", {std::to_string(ctx.device)}, o.fd);
        worker.send(std::string(reinterpret_cast<const char*>(&o.data), sizeof o.data));
        worker.close_input();
        const tutorial::ChildResult result = worker.wait(60.0);
        tutorial::print_child_output(result);
        wrong = not_doubled(o.block);
        ctx.claim(tutorial::documented(
            "worker_doubled_in_place",
            "the worker process doubled every value of the owner's block, in place",
            wrong == 0,
            format("%zu of %zu values not doubled; the worker %s", wrong, count,
                   result.describe().c_str()),
            "the worker's GPU could not use the block it imported. First step: TODO 2, "
            "cudaMemPoolSetAccess in let_this_gpu_use() for the worker's device",
            tutorial::Entry{"Runtime API reference: cudaMemPoolExportToShareableHandle",
                            "cudaMemPoolExportPointer cudaMemPoolImportPointer", "can"}));
    }
    if (o.fd >= 0) close(o.fd);
    if (o.block != nullptr) CUDA_CHECK(cudaFreeAsync(o.block, nullptr));  // the worker freed first
    CUDA_CHECK(cudaStreamSynchronize(nullptr));
    if (o.pool != nullptr && o.created == cudaSuccess) CUDA_CHECK(cudaMemPoolDestroy(o.pool));
    return ctx.verdict(shareable && wrong == 0,
                       format("%zu of %zu values doubled in place by another process",
                              count - wrong, count));
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex07_host_pool",
        "Exercise (chapter 07_ipc): pinned host memory a worker process uses in place",
        {{"check", "a pool of host memory shared with a worker, its block doubled in place", {},
          true, check}},
        {{"doubler", child_doubler}},
        "07_ipc/exercises/host_pool.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
