// Section `granularity_errors`: what the VMM calls say about sizes, addresses and offsets that are
// not multiples of the granularity, and the rounding that avoids all of it.
#include "common/check.hpp"
#include "common/child.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/report.hpp"
#include "common/vmm.hpp"
#include "sections.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::ChildResult;
using tutorial::format_bytes;
using tutorial::print_child_output;
using tutorial::round_up;
using tutorial::run_child;
using tutorial::vmm_create;
using tutorial::vmm_free;
using tutorial::vmm_granularity;
using tutorial::vmm_map;
using tutorial::vmm_properties;
using tutorial::vmm_release;
using tutorial::vmm_reserve;
using tutorial::vmm_set_access;
using tutorial::vmm_unmap;

namespace {

struct Refusal {
    std::string call;
    CUresult result;
};

// lesson:begin
// Sizes, addresses and offsets in the VMM calls must be whole multiples of the granularity `g`:
// each of these breaks that rule once, and is refused. `memory` is 2 * g of physical memory,
// `range` 4 * g of reserved addresses.
std::vector<Refusal> misaligned_calls(const CUmemAllocationProp& prop, std::size_t g,
                                      CUmemGenericAllocationHandle memory, CUdeviceptr range) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    CUmemGenericAllocationHandle unused = 0;
    CUdeviceptr unused_address = 0;
    return {
        {"cuMemCreate(size = granularity + 1)", cuMemCreate(&unused, g + 1, &prop, 0)},
        {"cuMemAddressReserve(size = granularity + 1)",
         cuMemAddressReserve(&unused_address, g + 1, 0, 0, 0)},
        {"cuMemMap(size = half a granularity)", cuMemMap(range, g / 2, 0, memory, 0)},
        {"cuMemMap(address = range + 4 KiB)", cuMemMap(range + 4096, g, 0, memory, 0)},
        {"cuMemMap(offset = one granularity)", cuMemMap(range, g, g, memory, 0)},
    };
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

}  // namespace

// Child role: each misaligned call once (they are refused, and a sanitizer would count each
// refusal as an error, so they run here). One line per call; exit 0 when every one was refused.
int child_misaligned_calls(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const CUmemAllocationProp prop = vmm_properties(device);
    const std::size_t g = vmm_granularity(prop);
    const CUmemGenericAllocationHandle memory = vmm_create(prop, 2 * g);
    const CUdeviceptr range = vmm_reserve(4 * g, 0);
    const std::vector<Refusal> cases = misaligned_calls(prop, g, memory, range);
    int accepted = 0;
    for (const Refusal& c : cases) {
        accepted += c.result == CUDA_SUCCESS;
        std::printf("%-44s -> %s\n", c.call.c_str(), tutorial::driver_error_name(c.result));
    }
    (void)cudaGetLastError();
    vmm_release(memory);
    vmm_free(range, 4 * g);
    return accepted == 0 ? 0 : 3;
}

tutorial::Result run_granularity_errors(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("VMM is not supported on this device");
    }
    const CUmemAllocationProp prop = vmm_properties(ctx.device);
    const std::size_t g = vmm_granularity(prop);
    std::printf("Granularity: %s. Calls that break it, in a child process:\n",
                format_bytes(g).c_str());
    const ChildResult child = run_child("misaligned_calls", {std::to_string(ctx.device)});
    print_child_output(child);
    std::printf("The child %s.\n\n", child.describe().c_str());

    // The fix: round every size up to the granularity, map at the start of a reservation (which
    // is aligned to the granularity), offset 0.
    const std::size_t wanted = g + 1;
    const std::size_t bytes = round_up(wanted, g);
    const CUmemGenericAllocationHandle memory = vmm_create(prop, bytes);
    const CUdeviceptr address = vmm_reserve(bytes, 0);
    vmm_map(address, bytes, memory);
    vmm_set_access(address, bytes, ctx.device);
    vmm_release(memory);
    auto* data = reinterpret_cast<std::uint32_t*>(address);
    fill_on_device(data, bytes / 4, 31);
    const std::size_t wrong = mismatches_on_device(data, bytes / 4, 31);
    vmm_unmap(address, bytes);
    vmm_free(address, bytes);
    std::printf(
        "round_up(%zu, %zu) = %zu: created, reserved, mapped at the start of the reservation\n"
        "with offset 0, and used by a kernel: %zu values wrong.\n",
        wanted, g, bytes, wrong);
    std::printf("\n");
    ctx.claim(tutorial::observed(
        "sizes, addresses and offsets off the granularity are refused, none silently rounded",
        child.succeeded(), "the child " + child.describe(),
        "this driver accepted one of them; its line says which"));
    ctx.claim(tutorial::observed("a size rounded up to the granularity, mapped at offset 0, works",
                                 wrong == 0, tutorial::format("%zu values wrong", wrong),
                                 "the access grant did not cover the mapping"));
    return ctx.verdict(child.succeeded() && wrong == 0,
                       "all 5 misaligned calls were refused, and the rounded-up allocation worked");
}
