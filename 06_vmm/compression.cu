// Section compression: ask cuMemCreate for compressible memory and read back what the driver
// granted. (checks/compression.cu times kernels writing and reading zeros, which compress, and a
// pattern, which does not, in compressible and ordinary memory.)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"

#include <cstddef>

namespace {

struct Region {
    CUdeviceptr address;
    std::size_t bytes;
    bool compressed;  // what the driver says it granted
};

// Step 1. Device memory on `device`; with `compressible`, a request for compression that the driver
// may grant or not (it says which in the properties it reports back for the handle).
CUmemAllocationProp properties(int device, bool compressible) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.allocFlags.compressionType =
        compressible ? CU_MEM_ALLOCATION_COMP_GENERIC : CU_MEM_ALLOCATION_COMP_NONE;
    return prop;
}

// Step 2. Create it, read back what was granted, and map it like any other VMM allocation.
Region make_region(int device, std::size_t bytes, bool compressible) {
    static const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    static const auto cuMemGetAllocationPropertiesFromHandle =
        DRIVER_FUNCTION(cuMemGetAllocationPropertiesFromHandle);
    const CUmemAllocationProp prop = properties(device, compressible);
    CUmemGenericAllocationHandle memory = 0;
    CU_CHECK(cuMemCreate(&memory, bytes, &prop, 0));
    CUmemAllocationProp granted{};
    CU_CHECK(cuMemGetAllocationPropertiesFromHandle(&granted, memory));
    const CUdeviceptr address = tutorial::vmm_reserve(bytes, 0);
    tutorial::vmm_map(address, bytes, memory);
    tutorial::vmm_set_access(address, bytes, device);
    tutorial::vmm_release(memory);
    return {address, bytes, granted.allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC};
}

}  // namespace
