// Section remapping: one range of addresses, different memory behind it over time; and what the
// cuMemMap and cuMemUnmap entries forbid. (checks/remapping.cu maps two allocations there in
// turns, checking their data, and makes the forbidden calls in a child.)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"

#include <cstddef>

namespace {

// Step 1. One range of addresses, different memory behind it over time. Mapping puts an allocation
// there; access belongs to the mapping, so every new mapping must be granted it again.
void map_at(CUdeviceptr range, std::size_t bytes, CUmemGenericAllocationHandle memory, int device) {
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    CU_CHECK(cuMemMap(range, bytes, 0, memory, 0));
    tutorial::vmm_set_access(range, bytes, device);
}

// Step 2. Unmapped, the memory lives on in its handle, contents and all, until cuMemRelease.
void unmap(CUdeviceptr range, std::size_t bytes) {
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    CU_CHECK(cuMemUnmap(range, bytes));
}

// Step 3. What the rules forbid: mapping over a range that is mapped (another allocation, or the
// same one again), and giving back addresses that are still mapped. Each call is meant to be
// refused, so each returns its answer instead of passing through CU_CHECK.
struct Forbidden {
    CUresult over, same, freed;
};

Forbidden forbidden_calls(CUdeviceptr range, std::size_t bytes, CUmemGenericAllocationHandle a,
                          CUmemGenericAllocationHandle b) {
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    Forbidden f{};
    f.over = cuMemMap(range, bytes, 0, b, 0);  // b over the mapped a
    f.same = cuMemMap(range, bytes, 0, a, 0);  // a over itself
    f.freed = cuMemAddressFree(range, bytes);  // a is still mapped there
    return f;
}

}  // namespace
