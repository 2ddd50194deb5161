// The course's check of exercise ex06_alias (the task is in ../alias.cu): the learner's two
// addresses must show the same memory, which must be taken once, and given back.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

// Written by the learner (exercises/alias.cu).
void map_twice(int device, std::size_t bytes, CUdeviceptr* first, CUdeviceptr* second);
void unmap_twice(CUdeviceptr first, CUdeviceptr second, std::size_t bytes);

namespace {

using tutorial::Context;
using tutorial::format_bytes;
using tutorial::MiB;
using tutorial::Result;

// One run of the learner's two functions on 64 MiB: what a kernel wrote through the first
// address as read through the second, and the device memory in use (relative to the size).
struct Aliased {
    CUdeviceptr first = 0, second = 0;
    std::size_t bytes = 0, differ = 0;
    double used = 0.0;  // in use while mapped twice / the size
    double left = 0.0;  // still in use after unmap_twice / the size
};

Aliased alias(int device) {
    Aliased a;
    const std::size_t granularity = tutorial::vmm_granularity(tutorial::vmm_properties(device));
    a.bytes = tutorial::round_up(64 * MiB, granularity);
    const std::size_t count = a.bytes / sizeof(std::uint32_t);
    const double size = static_cast<double>(a.bytes);
    const std::size_t free_at_start = tutorial::free_device_memory();
    map_twice(device, a.bytes, &a.first, &a.second);
    a.used = static_cast<double>(tutorial::device_memory_used_since(free_at_start)) / size;
    fill_on_device(reinterpret_cast<std::uint32_t*>(a.first), count, 11);
    a.differ = mismatches_on_device(reinterpret_cast<const std::uint32_t*>(a.second), count, 11);
    unmap_twice(a.first, a.second, a.bytes);
    a.left = static_cast<double>(tutorial::device_memory_used_since(free_at_start)) / size;
    return a;
}

Result check(Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("this device does not support virtual memory management");
    }
    const Aliased a = alias(ctx.device);
    const std::size_t count = a.bytes / sizeof(std::uint32_t);
    std::printf(
        "first 0x%llx, second 0x%llx; %zu of %zu values differ; %.2f times the size in "
        "use while mapped, %.2f after unmap_twice\n",
        static_cast<unsigned long long>(a.first), static_cast<unsigned long long>(a.second),
        a.differ, count, a.used, a.left);
    const bool aliased = a.first != a.second && a.differ == 0;
    ctx.claim(tutorial::documented(
        "reads_through_both",
        "what a kernel writes through the first address reads the same through the second, "
        "another address",
        aliased,
        a.first == a.second
            ? "the two addresses are the same"
            : std::to_string(a.differ) + " of " + std::to_string(count) + " values differ",
        a.first == a.second ? "both are one range. First step: two cuMemAddressReserve calls, "
                              "one per address"
                            : "the two addresses have memory of their own. First step: one "
                              "cuMemCreate, and cuMemMap that one handle at both addresses",
        tutorial::Entry{"Programming Guide, E.5 Virtual Aliasing Support", "内核 单调排序",
                        "是定义的"}));
    // Device memory in use, from cudaMemGetInfo: measured (another process may allocate
    // meanwhile, so a shortfall is measured again), and not judged under compute-sanitizer,
    // which takes device memory of its own.
    const bool once = ctx.claim(
        tutorial::at_most("taken_once",
                          "the memory is taken once (in use while mapped twice / the size)", a.used,
                          1.1, "x",
                          "two allocations. First step: create the physical memory once and map "
                          "it twice")
            .again([&] { return alias(ctx.device).used; }));
    const bool back = ctx.claim(
        tutorial::at_most("all_back",
                          "unmap_twice gives every byte back (still in use afterwards / the size)",
                          a.left, 0.1, "x",
                          "a mapping or reservation is left. First step: cuMemUnmap both ranges, "
                          "cuMemAddressFree both, and cuMemRelease the handle once")
            .again([&] { return alias(ctx.device).left; }));
    return ctx.verdict(aliased && once && back,
                       std::to_string(count - a.differ) + " of " + std::to_string(count) +
                           " values seen through both addresses, " +
                           tutorial::format("%.2f", a.used) + " times the size in use");
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex06_alias",
        "Exercise (chapter 06_vmm): one allocation mapped at two addresses",
        {{"check",
          "map_twice, unmap_twice: same memory, taken once, given back",
          {},
          true,
          check}},
        {},
        "06_vmm/exercises/alias.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
