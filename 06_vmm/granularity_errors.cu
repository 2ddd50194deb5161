// Section granularity_errors: what cuMemCreate, cuMemAddressReserve and cuMemMap say to sizes,
// addresses and offsets that break their entries' rules, and the rounding that avoids all of it.
// (checks/granularity_errors.cu makes the refused calls in a child and uses the rounded memory.)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace {

struct Refusal {
    std::string call;
    std::string rule;  // the rule of the call's entry that it breaks
    CUresult result;
};

// Step 1. Each call breaks one rule of its entry in the driver API reference, and only that one.
// Not all of them are the granularity `g`: cuMemAddressReserve asks for whole host pages, and
// cuMemMap's offset must be 0 for now, so one granularity (a whole multiple) breaks it too.
// `memory` is 2 * g of physical memory, `range` 4 * g of reserved addresses.
std::vector<Refusal> misaligned_calls(const CUmemAllocationProp& prop, std::size_t g,
                                      CUmemGenericAllocationHandle memory, CUdeviceptr range) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    CUmemGenericAllocationHandle unused = 0;
    CUdeviceptr unused_address = 0;
    return {
        {"cuMemCreate(size = granularity + 1)", "size: a multiple of the granularity",
         cuMemCreate(&unused, g + 1, &prop, 0)},
        {"cuMemAddressReserve(size = granularity + 1)", "size: whole host pages",
         cuMemAddressReserve(&unused_address, g + 1, 0, 0, 0)},
        {"cuMemMap(size = half a granularity)", "size: a multiple of the granularity",
         cuMemMap(range, g / 2, 0, memory, 0)},
        {"cuMemMap(address = range + 4 KiB)", "address: a multiple of the granularity",
         cuMemMap(range + 4096, g, 0, memory, 0)},
        {"cuMemMap(offset = one granularity)", "offset: 0, for now",
         cuMemMap(range, g, g, memory, 0)},
    };
}

// Step 2. The fix: round the size up to the granularity (a whole number of host pages too),
// reserve with the granularity as the alignment, map at the start of the range with offset 0.
struct Rounded {
    CUdeviceptr address;
    std::size_t bytes;
};

Rounded map_rounded_up(const CUmemAllocationProp& prop, std::size_t g, std::size_t wanted) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    Rounded r{0, tutorial::round_up(wanted, g)};
    CUmemGenericAllocationHandle memory = 0;
    CU_CHECK(cuMemCreate(&memory, r.bytes, &prop, 0));
    CU_CHECK(cuMemAddressReserve(&r.address, r.bytes, g, 0, 0));  // aligned to the granularity
    CU_CHECK(cuMemMap(r.address, r.bytes, 0, memory, 0));         // at its start, offset 0
    tutorial::vmm_set_access(r.address, r.bytes, prop.location.id);
    CU_CHECK(cuMemRelease(memory));  // the mapping keeps the memory
    return r;
}

}  // namespace
