// The course's check of exercise ex06_alias (the task is in ../alias.cu): the learner's two
// addresses must show the same memory, which must be taken once, and given back.
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

// Written by the learner (exercises/alias.cu).
void map_twice(int device, std::size_t bytes, CUdeviceptr* first, CUdeviceptr* second);
void unmap_twice(CUdeviceptr first, CUdeviceptr second, std::size_t bytes);

namespace {

using tutorial::Context;
using tutorial::format_bytes;
using tutorial::MiB;
using tutorial::Result;

Result check(Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("this device does not support virtual memory management");
    }
    const std::size_t granularity = tutorial::vmm_granularity(tutorial::vmm_properties(ctx.device));
    const std::size_t bytes = tutorial::round_up(64 * MiB, granularity);
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const std::size_t free_at_start = tutorial::free_device_memory();
    CUdeviceptr first = 0, second = 0;
    map_twice(ctx.device, bytes, &first, &second);
    const std::size_t used = tutorial::device_memory_used_since(free_at_start);
    fill_on_device(reinterpret_cast<std::uint32_t*>(first), count, 11);
    const std::size_t differ =
        mismatches_on_device(reinterpret_cast<const std::uint32_t*>(second), count, 11);
    std::printf("first 0x%llx, second 0x%llx; %zu of %zu values differ; %s in use for %s\n",
                static_cast<unsigned long long>(first), static_cast<unsigned long long>(second),
                differ, count, format_bytes(used).c_str(), format_bytes(bytes).c_str());
    unmap_twice(first, second, bytes);
    const std::size_t left = tutorial::device_memory_used_since(free_at_start);

    ctx.claim(tutorial::documented("the two addresses differ", first != second,
                                   first != second ? "they differ" : "they are the same",
                                   "both are one range. First step: two cuMemAddressReserve "
                                   "calls, one per address",
                                   "Driver API reference: cuMemAddressReserve"));
    ctx.claim(tutorial::documented(
        "what a kernel writes through the first address reads the same through the second",
        differ == 0, std::to_string(differ) + " of " + std::to_string(count) + " values differ",
        "the two addresses have memory of their own. First step: one cuMemCreate, and cuMemMap "
        "that one handle at both addresses",
        "Programming Guide, Virtual Memory Management (E.5, Virtual Aliasing Support)"));
    // compute-sanitizer takes device memory of its own: memory claims are not judged under it.
    const std::string not_judged = tutorial::why_timing_not_judged();
    const bool once = ctx.claim(
        tutorial::documented("the memory is taken once", used <= bytes + granularity,
                             format_bytes(used) + " in use for " + format_bytes(bytes),
                             "two allocations. First step: create the physical memory once and "
                             "map it twice",
                             "Programming Guide, Virtual Memory Management (E.5, Virtual Aliasing "
                             "Support)"),
        not_judged);
    const bool back =
        ctx.claim(tutorial::documented("unmap_twice gives every byte back", left <= granularity,
                                       format_bytes(left) + " still in use",
                                       "a mapping or reservation is left. First step: cuMemUnmap "
                                       "both ranges, cuMemAddressFree both, and "
                                       "cuMemRelease the handle once",
                                       "Driver API reference: cuMemUnmap, cuMemRelease"),
                  not_judged);
    return ctx.verdict(first != second && differ == 0 && once && back,
                       std::to_string(count - differ) + " of " + std::to_string(count) +
                           " values seen through both addresses, " + format_bytes(used) +
                           " in use for " + format_bytes(bytes));
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
          check}}};
    return tutorial::run_chapter(program, argc, argv);
}
