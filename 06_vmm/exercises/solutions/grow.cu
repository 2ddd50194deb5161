// Exercise ex06_grow (chapter 06_vmm), the course's solution: one reservation for the largest
// size, and each growth maps new physical memory behind the old, so nothing is copied and the
// address never changes. The task is in ../grow.cu.
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cuda.h>

#include <cstddef>
#include <vector>

struct Growable {
    int device = 0;
    std::size_t max_size = 0;
    CUdeviceptr base = 0;
    std::size_t size = 0;
    CUmemAllocationProp prop{};
    std::size_t granularity = 0;
    std::size_t reserved = 0;
    std::size_t mapped = 0;           // bytes mapped from base on, a multiple of granularity
    std::vector<std::size_t> pieces;  // the size of each mapping, in order, for cuMemUnmap
};

Growable* growable_create(int device, std::size_t max_size) {
    const auto cuMemGetAllocationGranularity = DRIVER_FUNCTION(cuMemGetAllocationGranularity);
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    Growable* buffer = new Growable;
    buffer->device = device;
    buffer->max_size = max_size;
    buffer->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    buffer->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    buffer->prop.location.id = device;
    CU_CHECK(cuMemGetAllocationGranularity(&buffer->granularity, &buffer->prop,
                                           CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    const std::size_t g = buffer->granularity;
    buffer->reserved = (max_size + g - 1) / g * g;
    // Addresses only: no memory is taken until something is mapped.
    CU_CHECK(cuMemAddressReserve(&buffer->base, buffer->reserved, 0, 0, 0));
    return buffer;
}

CUdeviceptr growable_resize(Growable* buffer, std::size_t new_size) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    const std::size_t g = buffer->granularity;
    const std::size_t needed = (new_size + g - 1) / g * g;
    if (needed > buffer->mapped) {
        const std::size_t extra = needed - buffer->mapped;
        const CUdeviceptr at = buffer->base + buffer->mapped;
        CUmemGenericAllocationHandle memory = 0;
        CU_CHECK(cuMemCreate(&memory, extra, &buffer->prop, 0));
        CU_CHECK(cuMemMap(at, extra, 0, memory, 0));
        CU_CHECK(cuMemRelease(memory));  // the mapping holds the memory until it is unmapped
        CUmemAccessDesc access{};
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = buffer->device;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        CU_CHECK(cuMemSetAccess(at, extra, &access, 1));
        buffer->pieces.push_back(extra);
        buffer->mapped = needed;
    }
    if (new_size > buffer->size) buffer->size = new_size;
    return buffer->base;
}

void growable_destroy(Growable* buffer) {
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    std::size_t offset = 0;
    for (std::size_t piece : buffer->pieces) {
        CU_CHECK(cuMemUnmap(buffer->base + offset, piece));  // frees the released memory
        offset += piece;
    }
    CU_CHECK(cuMemAddressFree(buffer->base, buffer->reserved));
    delete buffer;
}
