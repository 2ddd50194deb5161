// The course's check of exercise ex06_grow (the task is in ../grow.cu): the learner's buffer
// must keep its address and its data as it grows, hold only as much device memory as its size,
// and give it all back.
#include "common/harness/chapter.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/patterns.hpp"
#include "common/harness/report.hpp"
#include "common/vmm.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

// Written by the learner (exercises/grow.cu).
struct Growable;
Growable* growable_create(int device, std::size_t max_size);
CUdeviceptr growable_resize(Growable* buffer, std::size_t new_size);
void growable_destroy(Growable* buffer);

namespace {

using tutorial::Context;
using tutorial::format_bytes;
using tutorial::MiB;
using tutorial::Result;

std::uint32_t* values(CUdeviceptr address) {
    return reinterpret_cast<std::uint32_t*>(address);
}

Result report(Context& ctx, int moved, int lost, int over, bool all_back) {
    ctx.claim(tutorial::documented(
        "the buffer keeps its address as it grows", moved == 0,
        std::to_string(moved) + " of 2 growths moved it",
        "each growth allocates anew and copies. First step: reserve addresses for the largest "
        "size once, in growable_create, with cuMemAddressReserve",
        "Programming Guide, Virtual Memory Management (E.4, Reserving a Virtual Address Range)"));
    ctx.claim(tutorial::documented("the values written before a growth are still there", lost == 0,
                                   std::to_string(lost) + " of 2 growths lost values",
                                   "the old memory was not kept. First step: map the new "
                                   "memory behind the old, never over it",
                                   "Driver API reference: cuMemMap"));
    // compute-sanitizer takes device memory of its own: memory claims are not judged under it.
    const std::string not_judged = tutorial::why_timing_not_judged();
    const bool sized = ctx.claim(
        tutorial::documented(
            "the device memory in use is the buffer's size, within one granularity", over == 0,
            std::to_string(over) + " of 2 sizes off",
            "memory is taken ahead of need, or kept after a growth. First step: cuMemCreate only "
            "the bytes a growth adds",
            "Driver API reference: cuMemCreate"),
        not_judged);
    const bool freed =
        ctx.claim(tutorial::documented("growable_destroy gives every byte back", all_back,
                                       all_back ? "all back" : "some still in use",
                                       "a mapping or the reservation is left. First step: "
                                       "cuMemUnmap every mapping, then cuMemAddressFree",
                                       "Driver API reference: cuMemUnmap, cuMemRelease"),
                  not_judged);
    const bool ok = moved == 0 && lost == 0 && sized && freed;
    return ctx.verdict(ok, std::to_string(2 - moved) + " of 2 growths in place, " +
                               std::to_string(2 - lost) + " kept the values, " +
                               std::to_string(2 - over) + " held no more than the size");
}

Result check(Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("this device does not support virtual memory management");
    }
    const std::size_t granularity = tutorial::vmm_granularity(tutorial::vmm_properties(ctx.device));
    const std::size_t free_at_start = tutorial::free_device_memory();
    Growable* buffer = growable_create(ctx.device, 1024 * MiB);
    const CUdeviceptr first = growable_resize(buffer, 64 * MiB);
    fill_on_device(values(first), 64 * MiB / 4, 7);
    std::printf("%-10s  %-18s  %-10s  %-14s  %s\n", "size", "address", "moved", "values kept",
                "device memory in use");
    int moved = 0, lost = 0, over = 0;
    std::size_t old_size = 64 * MiB;
    for (std::size_t size : {160 * MiB, 320 * MiB}) {
        const CUdeviceptr now = growable_resize(buffer, size);
        const std::size_t kept_wrong = mismatches_on_device(values(now), old_size / 4, 7);
        const std::size_t used = tutorial::device_memory_used_since(free_at_start);
        const bool fits = used <= size + granularity && used + granularity >= size;
        moved += now != first ? 1 : 0;
        lost += kept_wrong > 0 ? 1 : 0;
        over += fits ? 0 : 1;
        std::printf("%-10s  0x%-16llx  %-10s  %-14s  %s\n", format_bytes(size).c_str(),
                    static_cast<unsigned long long>(now), now != first ? "yes" : "no",
                    kept_wrong == 0 ? "all" : "NOT all", format_bytes(used).c_str());
        fill_on_device(values(now), size / 4, 7);
        old_size = size;
    }
    growable_destroy(buffer);
    const std::size_t left = tutorial::device_memory_used_since(free_at_start);
    std::printf("after growable_destroy: %s still in use\n", format_bytes(left).c_str());
    return report(ctx, moved, lost, over, left <= granularity);
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex06_grow",
        "Exercise (chapter 06_vmm): a buffer that grows without moving",
        {{"check", "growable_resize: same address, data kept, memory = size", {}, true, check}}};
    return tutorial::run_chapter(program, argc, argv);
}
