// The course's check of exercise ex06_grow (the task is in ../grow.cu): the learner's buffer
// must keep its address and its data as it grows, hold only as much device memory as its size,
// and give it all back.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
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

// One run of the learner's buffer: grown from 64 MiB to 160 and 320 MiB (room for 1 GiB).
struct Growth {
    int moved = 0, lost = 0;  // growths that moved the buffer, that lost values
    double worst_off = 0.0;   // the largest gap between memory in use and size, in granules
    double left = 0.0;        // memory still in use after growable_destroy, in granules
};

Growth grow(int device, bool print) {
    const std::size_t granularity = tutorial::vmm_granularity(tutorial::vmm_properties(device));
    const double g = static_cast<double>(granularity);
    const std::size_t free_at_start = tutorial::free_device_memory();
    Growable* buffer = growable_create(device, 1024 * MiB);
    const CUdeviceptr first = growable_resize(buffer, 64 * MiB);
    fill_on_device(values(first), 64 * MiB / 4, 7);
    if (print) {
        std::printf("%-10s  %-18s  %-10s  %-14s  %s\n", "size", "address", "moved", "values kept",
                    "device memory in use");
    }
    Growth r;
    std::size_t old_size = 64 * MiB;
    for (std::size_t size : {160 * MiB, 320 * MiB}) {
        const CUdeviceptr now = growable_resize(buffer, size);
        const std::size_t kept_wrong = mismatches_on_device(values(now), old_size / 4, 7);
        const std::size_t used = tutorial::device_memory_used_since(free_at_start);
        const double off = std::abs(static_cast<double>(used) - static_cast<double>(size)) / g;
        r.moved += now != first ? 1 : 0;
        r.lost += kept_wrong > 0 ? 1 : 0;
        r.worst_off = std::max(r.worst_off, off);
        if (print) {
            std::printf("%-10s  0x%-16llx  %-10s  %-14s  %s\n", format_bytes(size).c_str(),
                        static_cast<unsigned long long>(now), now != first ? "yes" : "no",
                        kept_wrong == 0 ? "all" : "NOT all", format_bytes(used).c_str());
        }
        fill_on_device(values(now), size / 4, 7);
        old_size = size;
    }
    growable_destroy(buffer);
    const std::size_t left = tutorial::device_memory_used_since(free_at_start);
    r.left = static_cast<double>(left) / g;
    if (print) std::printf("after growable_destroy: %s still in use\n", format_bytes(left).c_str());
    return r;
}

Result check(Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("this device does not support virtual memory management");
    }
    const Growth r = grow(ctx.device, true);
    // Device memory in use, from cudaMemGetInfo: measured (another process may allocate
    // meanwhile, so a shortfall is measured again), and not judged under compute-sanitizer,
    // which takes device memory of its own.
    const bool sized = ctx.claim(
        tutorial::at_most("memory_is_size",
                          "the device memory in use is the buffer's size, within one granularity "
                          "(the largest gap, in granules)",
                          r.worst_off, 1.0, " granules",
                          "memory is taken ahead of need, or kept after a growth. First step: "
                          "cuMemCreate only the bytes a growth adds")
            .again([&] { return grow(ctx.device, false).worst_off; }));
    const bool freed = ctx.claim(
        tutorial::at_most("all_back",
                          "growable_destroy gives every byte back (still in use afterwards, in "
                          "granules)",
                          r.left, 1.0, " granules",
                          "a mapping or the reservation is left. First step: cuMemUnmap every "
                          "mapping, then cuMemAddressFree")
            .again([&] { return grow(ctx.device, false).left; }));
    // That the buffer keeps its address and its values is the learner's design (addresses
    // reserved once, new memory mapped behind the old), not a promise of CUDA's: plain checks.
    const char* first_step =
        r.moved != 0 ? "; each growth allocates anew and copies. First step: reserve addresses "
                       "for the largest size once, in growable_create, with cuMemAddressReserve"
        : r.lost != 0 ? "; the old memory was not kept. First step: map the new memory behind "
                        "the old, never over it"
                      : "";
    const bool ok = r.moved == 0 && r.lost == 0 && sized && freed;
    return ctx.verdict(ok, std::to_string(2 - r.moved) + " of 2 growths in place, " +
                               std::to_string(2 - r.lost) +
                               " kept the values, the largest gap "
                               "between memory in use and size " +
                               tutorial::format("%.1f", r.worst_off) + " granules" + first_step);
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex06_grow",
        "Exercise (chapter 06_vmm): a buffer that grows without moving",
        {{"check", "growable_resize: same address, data kept, memory = size", {}, true, check}},
        {},
        "06_vmm/exercises/grow.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
