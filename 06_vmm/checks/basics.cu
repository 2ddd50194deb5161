// Checks of section basics: runs the walkthrough of ../basics.cu in a child first (if cuMemRelease
// freed mapped memory, its kernel would end the child, not this process), then here, reading the
// free device memory at its steps, and narrates what each step did.
#include "06_vmm/basics.cu"

#include "06_vmm/helpers/step_memory.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/vmm.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::format;
using tutorial::format_bytes;
using vmm_checks::fell_by;

namespace {

// The walkthrough once, with the free device memory read at its steps.
struct Measured {
    Found found;
    std::size_t before = 0;  // free at step 1
    std::size_t mapped = 0;  // free at step 8, mapped, the handle long released
    std::size_t after = 0;   // free once unmapped and the addresses given back
};

Measured measure(int device, std::size_t wanted) {
    vmm_checks::StepMemory memory;
    Measured m;
    m.found = walkthrough(device, wanted);
    m.before = memory.at_start(created).back();
    m.mapped = memory.at_start(torn_down).back();
    m.after = memory.at_end(torn_down).back();
    return m;
}

void narrate(const Measured& m, std::size_t wanted, int device, const std::string& child) {
    const Found& f = m.found;
    std::printf(
        "1. cuMemCreate: %zu bytes wanted, rounded up to %s (granularity %s).\n"
        "2. cuMemAddressReserve: %s of addresses at 0x%llx, no memory behind them yet.\n"
        "3. cuMemMap: the physical memory now sits behind those addresses.\n"
        "4. cuMemSetAccess: device %d may read and write the range.\n"
        "5. cuMemRelease right away: legal, the mapping keeps the memory alive.\n"
        "6. A kernel filled the range and another checked it: %zu of %zu values wrong (a child\n"
        "   ran the same walkthrough first: it %s).\n"
        "7. cuMemRetainAllocationHandle on an address in the middle of the range: %s handle;\n"
        "   cuMemGetAllocationPropertiesFromHandle: type %s, device %d.\n"
        "8. cuMemUnmap, then cuMemAddressFree. Free device memory: %s before, %s while\n"
        "   mapped, %s after.\n\n",
        wanted, format_bytes(f.bytes).c_str(), format_bytes(f.granularity).c_str(),
        format_bytes(f.bytes).c_str(), static_cast<unsigned long long>(f.address), device, f.wrong,
        f.bytes / sizeof(std::uint32_t), child.c_str(), f.same_handle ? "the same" : "ANOTHER",
        f.retained.type == CU_MEM_ALLOCATION_TYPE_PINNED ? "PINNED" : "other",
        f.retained.location.id, format_bytes(m.before).c_str(), format_bytes(m.mapped).c_str(),
        format_bytes(m.after).c_str());
}

}  // namespace

// Child role: the whole walkthrough; if cuMemRelease freed mapped memory, its kernel faults here.
int child_use_after_release(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const Found found = walkthrough(device, std::strtoull(args.at(1).c_str(), nullptr, 10));
    std::printf("values wrong after cuMemRelease -> %zu\n", found.wrong);
    return 0;
}

tutorial::Result run_basics(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("VMM is not supported on this device");
    }
    // One byte more than whole granules by default, so that the rounding shows.
    const std::size_t wanted = ctx.size_or((ctx.quick() ? (64 << 20) : (300 << 20)) + 1);
    walkthrough(ctx.device, 1);  // loads the kernels first: their code takes device memory too

    const tutorial::ChildResult child = tutorial::run_child(
        "use_after_release", {std::to_string(ctx.device), std::to_string(wanted)});
    const bool child_ok = child.succeeded() &&
                          tutorial::child_answer(child, "values wrong after cuMemRelease") == "0";
    const Measured m = measure(ctx.device, wanted);
    narrate(m, wanted, ctx.device, child.describe());
    const Found& f = m.found;
    const std::size_t count = f.bytes / sizeof(std::uint32_t);

    ctx.claim(tutorial::documented(
        "release_keeps_memory",
        "after cuMemRelease kernels still use the mapped range as usual",
        f.wrong == 0 && child_ok,
        format("%zu of %zu values wrong; the child %s", f.wrong, count, child.describe().c_str()),
        "cuMemRelease freed memory that was still mapped, or the access grant did not cover the "
        "whole range",
        tutorial::Entry{"Driver API reference: cuMemRelease", "handle mappings", "can"}));
    ctx.claim(tutorial::documented(
        "handle_from_any_address",
        "the handle can be had back from any address inside the mapped range", f.same_handle,
        f.same_handle ? "the same handle value from the middle of the range" : "another handle",
        "the address given was outside the mapping",
        tutorial::Entry{"Driver API reference: cuMemRetainAllocationHandle", "addr cuMemMap",
                        "can"}));
    // Free device memory is the whole device's (cudaMemGetInfo): measured, and measured again
    // where another process moved it meanwhile. Below 32 MiB one granule of the driver's own
    // books would be a large share of the mapping.
    const std::string small = tutorial::why_too_small(
        f.bytes, 32 << 20, "one granule the driver keeps for its own books would be most of it");
    ctx.claim(tutorial::at_least("memory_taken",
                                 "the physical memory is taken while mapped, the handle long "
                                 "released (fall of free device memory / the mapping's size)",
                                 fell_by(m.before, m.mapped, f.bytes), 0.9, "x",
                                 "another process freed device memory during the section")
                  .again([&] {
                      const Measured n = measure(ctx.device, wanted);
                      return fell_by(n.before, n.mapped, n.found.bytes);
                  }),
              small);
    ctx.claim(tutorial::at_most("memory_back",
                                "...and given back by the last cuMemUnmap (free device memory "
                                "still missing afterwards / the mapping's size)",
                                fell_by(m.before, m.after, f.bytes), 0.1, "x",
                                "another process allocated device memory during the section")
                  .again([&] {
                      const Measured n = measure(ctx.device, wanted);
                      return fell_by(n.before, n.after, n.found.bytes);
                  }),
              small);
    return ctx.verdict(f.wrong == 0 && child_ok && f.same_handle,
                       "the mapped range held the kernel's data, in the child and here, and the "
                       "handle came back from the middle of the range");
}

TUTORIAL_SECTION(basics, run_basics);
TUTORIAL_CHILD(use_after_release, child_use_after_release);
