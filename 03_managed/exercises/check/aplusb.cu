// The course's check of exercise ex03_aplusb (the task is in ../aplusb.cu): the learner's slot
// must be managed memory, hold a + b when the CPU reads it, and be freed.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <string>

// Written by the learner (exercises/aplusb.cu).
int* make_result_slot();
void add_on_gpu(int a, int b, int* slot);
void free_result_slot(int* slot);

namespace {

using tutorial::Context;
using tutorial::Result;

Result check(Context& ctx) {
    int* slot = make_result_slot();
    const bool managed = tutorial::memory_type(slot) == cudaMemoryTypeManaged;
    ctx.claim(tutorial::documented(
        "slot_is_managed", "make_result_slot returns managed memory", managed,
        managed ? "cudaPointerGetAttributes says managed"
                : "cudaPointerGetAttributes says it is not managed",
        "the slot is device memory, which the CPU cannot read. First step: allocate it with "
        "cudaMallocManaged",
        tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes", "cudaMemoryTypeManaged",
                        "can"}));
    int right = 0;
    const int pairs[5][2] = {{1, 2}, {10, 20}, {-7, 7}, {123456, 654321}, {-5, -8}};
    if (managed) {  // the CPU reading device memory would crash
        for (const auto& pair : pairs) {
            *slot = -1;
            add_on_gpu(pair[0], pair[1], slot);
            const int read = *slot;  // the CPU reads the managed slot itself
            std::printf("add_on_gpu(%d, %d): the CPU reads %d\n", pair[0], pair[1], read);
            right += read == pair[0] + pair[1] ? 1 : 0;
        }
        ctx.claim(tutorial::documented(
            "cpu_reads_sums", "the CPU reads a + b from the slot, with no copy", right == 5,
            std::to_string(right) + " of 5 sums right",
            "the CPU read the slot before the kernel wrote it. First step: cudaDeviceSynchronize "
            "after the launch",
            tutorial::Entry{"Programming Guide, N.1.2 Simplifying GPU Programming",
                            "cudaMallocManaged()", "返回"}));
    }
    free_result_slot(slot);
    const bool freed = tutorial::memory_type(slot) == cudaMemoryTypeUnregistered;
    ctx.claim(
        tutorial::documented("slot_freed", "free_result_slot frees the slot", freed,
                             freed ? "CUDA no longer knows the pointer" : "still allocated",
                             "the slot is still allocated. First step: cudaFree(slot)",
                             tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes",
                                             "cudaMemoryTypeUnregistered", "will"}));
    return ctx.verdict(right == 5 && freed, std::to_string(right) +
                                                " of 5 sums read from "
                                                "managed memory");
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex03_aplusb",
        "Exercise (chapter 03_managed): a + b with managed memory",
        {{"check", "make_result_slot, add_on_gpu, free_result_slot", {}, true, check}},
        {},
        "03_managed/exercises/aplusb.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
