// Section support: can this device do virtual memory management (VMM), and in what granularity
// does it hand out memory? Both are questions for the driver API.
//   nvcc -std=c++17 -I. 06_vmm/support.cpp common/standalone.cu -o build/support
//   (or in 06_vmm/: nvcc -std=c++17 -I.. support.cpp ../common/standalone.cu -o ../build/support)
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cstddef>
#include <cstdio>

namespace {

struct Granularity {
    std::size_t minimum = 0, recommended = 0;
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

// What the walkthrough found: the VMM attributes, and the granularity where VMM is supported.
struct Found {
    int vmm = 0, posix_fd = 0, compression = 0, rdma = 0;
    Granularity granularity;
};

Found walkthrough(int device) {
    Found found;
    // 1. Before any other VMM call, whether the device supports it at all (the Guide's E.2),
    //    and the attributes of what it can do with such memory.
    found.vmm = driver_value(device, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
    found.posix_fd =
        driver_value(device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
    found.compression = driver_value(device, CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED);
    found.rdma = driver_value(device, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED);
    // 2. Where it is supported, the granularity every size and offset is a multiple of.
    if (found.vmm) found.granularity = granularity(device);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const Found found = walkthrough(0);
    std::printf(
        "VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED %d, HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED "
        "%d, GENERIC_COMPRESSION_SUPPORTED %d, GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED %d\n"
        "granularity: minimum %zu bytes, recommended %zu bytes\n",
        found.vmm, found.posix_fd, found.compression, found.rdma, found.granularity.minimum,
        found.granularity.recommended);
    return 0;
}
#endif
