// The course's check of exercise ex01_zero_copy (the task is in ../zero_copy.cu): the learner's
// buffer must be pinned host memory, hold the kernel's values when the CPU reads it, and be
// released.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

// Written by the learner (exercises/zero_copy.cu).
std::uint32_t* allocate_shared(std::size_t count);
void fill_from_gpu(std::uint32_t* data, std::size_t count);
void release_shared(std::uint32_t* data);

namespace {

using tutorial::Context;
using tutorial::Result;

Result check(Context& ctx) {
    constexpr std::size_t count = std::size_t{4} << 20;  // 16 MiB
    std::uint32_t* data = allocate_shared(count);
    const cudaMemoryType type = tutorial::memory_type(data);
    const bool pinned = type == cudaMemoryTypeHost;
    // cudaPointerGetAttributes: cudaMemoryTypeHost for registered (pinned) host memory.
    ctx.claim(tutorial::documented(
        "is_pinned", "allocate_shared returns pinned host memory", pinned,
        std::string("cudaPointerGetAttributes says ") + tutorial::memory_type_name(type),
        "the memory comes from new or malloc, which the GPU cannot reach. First step: allocate "
        "with cudaHostAlloc(&data, bytes, cudaHostAllocMapped)",
        tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes", "cudaMemoryTypeHost",
                        "can"}));
    std::size_t wrong = count;
    if (pinned) {  // a kernel storing through a pageable pointer would stop with an illegal address
        for (std::size_t i = 0; i < count; ++i) data[i] = 0;
        fill_from_gpu(data, count);
        wrong = 0;
        for (std::size_t i = 0; i < count; ++i) wrong += data[i] != i * 3 + 1;
        // Unified Addressing: cudaMallocHost and cudaHostAlloc memory is directly accessible
        // from every device, at the pointer value the host uses.
        ctx.claim(tutorial::documented(
            "cpu_reads_in_place",
            "the CPU reads the kernel's values in the same buffer, with no copy", wrong == 0,
            std::to_string(wrong) + " of " + std::to_string(count) + " values wrong",
            "the kernel did not run on this buffer, or the CPU read before it finished. First "
            "step: launch write_values on data, then cudaDeviceSynchronize",
            tutorial::Entry{"Runtime API reference: Unified Addressing",
                            "cudaMallocHost cudaHostAlloc", "is always"}));
    }
    release_shared(data);
    const cudaMemoryType after = tutorial::memory_type(data);
    // The note of cudaPointerGetAttributes: a host pointer CUDA does not know (freed memory
    // included) gives cudaMemoryTypeUnregistered, with cudaSuccess.
    ctx.claim(tutorial::documented(
        "released", "release_shared gives the memory back", after == cudaMemoryTypeUnregistered,
        std::string("afterwards cudaPointerGetAttributes says ") +
            tutorial::memory_type_name(after),
        "the buffer is still allocated. First step: free it with cudaFreeHost",
        tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes",
                        "cudaMemoryTypeUnregistered cudaSuccess", "will"}));
    return ctx.verdict(wrong == 0 && after == cudaMemoryTypeUnregistered,
                       std::to_string(count - wrong) + " of " + std::to_string(count) +
                           " values written by the GPU into pinned host memory");
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex01_zero_copy",
        "Exercise (chapter 01_uva): a kernel writes into host memory",
        {{"check", "allocate_shared, fill_from_gpu, release_shared", {}, true, check}},
        {},
        "01_uva/exercises/zero_copy.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
