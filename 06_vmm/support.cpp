// Section support: can this device do virtual memory management (VMM), and in what granularity
// does it hand out memory? Both are questions for the driver API. (checks/support.cpp prints the
// attributes and tries one granule.)
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cstddef>

namespace {

struct Granularity {
    std::size_t minimum, recommended;
};

// Step 1. VMM support, and the attributes that go with it, exist only in the driver API, which
// names the device by its CUdevice handle.
int driver_value(int ordinal, CUdevice_attribute attribute) {
    const auto cuDeviceGet = DRIVER_FUNCTION(cuDeviceGet);
    const auto cuDeviceGetAttribute = DRIVER_FUNCTION(cuDeviceGetAttribute);
    CUdevice device = 0;
    CU_CHECK(cuDeviceGet(&device, ordinal));  // the driver's handle for runtime device N
    int value = 0;
    CU_CHECK(cuDeviceGetAttribute(&value, attribute, device));
    return value;
}

// Step 2. Physical allocations and mappings come in multiples of the granularity, which depends
// on the kind of memory asked for: here plain device memory on `device`.
Granularity granularity(int device) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    const auto cuMemGetAllocationGranularity = DRIVER_FUNCTION(cuMemGetAllocationGranularity);
    Granularity g{};
    CU_CHECK(cuMemGetAllocationGranularity(&g.minimum, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CU_CHECK(
        cuMemGetAllocationGranularity(&g.recommended, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    return g;
}

}  // namespace
