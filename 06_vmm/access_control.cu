// Section access_control: a mapping alone grants nothing; cuMemSetAccess grants a device no
// access, read-only or read-write access to a range, and cuMemGetAccess says which it has.
// (checks/access_control.cu has kernels touch ranges of each kind, the faulting ones in children.)
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cstddef>
#include <cstdint>

namespace {

// Step 1. Grants `device` the access `flags` to the range: a mapping alone grants nothing.
void set_access(CUdeviceptr address, std::size_t bytes, int device, CUmemAccess_flags flags) {
    static const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = flags;  // PROT_NONE, PROT_READ or PROT_READWRITE
    CU_CHECK(cuMemSetAccess(address, bytes, &access, 1));
}

// Step 2. What `device` may do with the memory at `address` now.
unsigned long long access_flags(CUdeviceptr address, int device) {
    static const auto cuMemGetAccess = DRIVER_FUNCTION(cuMemGetAccess);
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = device;
    unsigned long long flags = 0;
    CU_CHECK(cuMemGetAccess(&flags, &location, address));
    return flags;
}

// A kernel that writes one value: on a PROT_READ range, this write is what fails.
__global__ void write_one(std::uint32_t* data) {
    data[0] = 1;
}

}  // namespace
