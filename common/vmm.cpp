#include "common/vmm.hpp"

#include "common/check.hpp"
#include "common/device.hpp"
#include "common/driver.hpp"

namespace tutorial {

bool vmm_supported(int device) {
    return driver_attribute(device, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) == 1;
}

std::size_t vmm_granularity(const CUmemAllocationProp& prop,
                            CUmemAllocationGranularity_flags which) {
    static const auto cuMemGetAllocationGranularity =
        DRIVER_FUNCTION(cuMemGetAllocationGranularity);
    std::size_t granularity = 0;
    CU_CHECK(cuMemGetAllocationGranularity(&granularity, &prop, which));
    return granularity;
}

std::size_t round_up(std::size_t bytes, std::size_t multiple) {
    return (bytes + multiple - 1) / multiple * multiple;
}

CUmemAllocationProp vmm_properties(int device, CUmemAllocationHandleType handle_types,
                                   bool compressible) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;  // resident in device memory, never paged out
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = handle_types;
    if (compressible) prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
    return prop;
}

CUmemGenericAllocationHandle vmm_create(const CUmemAllocationProp& prop, std::size_t bytes) {
    static const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    CUmemGenericAllocationHandle memory = 0;
    CU_CHECK(cuMemCreate(&memory, bytes, &prop, 0));
    return memory;
}

CUdeviceptr vmm_reserve(std::size_t bytes, std::size_t alignment) {
    static const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    CUdeviceptr address = 0;
    CU_CHECK(cuMemAddressReserve(&address, bytes, alignment, 0, 0));
    return address;
}

void vmm_map(CUdeviceptr address, std::size_t bytes, CUmemGenericAllocationHandle memory) {
    static const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    CU_CHECK(cuMemMap(address, bytes, 0, memory, 0));
}

void vmm_set_access(CUdeviceptr address, std::size_t bytes, int device, CUmemAccess_flags flags) {
    static const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = flags;
    CU_CHECK(cuMemSetAccess(address, bytes, &access, 1));
}

unsigned long long vmm_access(CUdeviceptr address, int device) {
    static const auto cuMemGetAccess = DRIVER_FUNCTION(cuMemGetAccess);
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = device;
    unsigned long long flags = 0;
    CU_CHECK(cuMemGetAccess(&flags, &location, address));
    return flags;
}

const char* vmm_access_name(unsigned long long flags) {
    switch (flags) {
        case CU_MEM_ACCESS_FLAGS_PROT_NONE: return "PROT_NONE";
        case CU_MEM_ACCESS_FLAGS_PROT_READ: return "PROT_READ";
        case CU_MEM_ACCESS_FLAGS_PROT_READWRITE: return "PROT_READWRITE";
    }
    return "?";
}

void vmm_unmap(CUdeviceptr address, std::size_t bytes) {
    static const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    CU_CHECK(cuMemUnmap(address, bytes));
}

void vmm_release(CUmemGenericAllocationHandle memory) {
    static const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    CU_CHECK(cuMemRelease(memory));
}

void vmm_free(CUdeviceptr address, std::size_t bytes) {
    static const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    CU_CHECK(cuMemAddressFree(address, bytes));
}

}  // namespace tutorial
