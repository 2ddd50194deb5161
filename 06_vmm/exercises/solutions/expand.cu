// Exercise ex06_expand (chapter 06_vmm), the course's solution: grow creates one chunk, maps it
// right behind the chunks already mapped and grants the device access to it; shrink unmaps the
// last chunk and releases its handle, so that the driver frees its memory while the addresses
// stay reserved. The task is in ../expand.cu.
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cuda.h>

#include <cstddef>

CUmemGenericAllocationHandle grow(CUdeviceptr end, std::size_t chunk,
                                  const CUmemAllocationProp& prop) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    CUmemGenericAllocationHandle handle = 0;
    CU_CHECK(cuMemCreate(&handle, chunk, &prop, 0));
    CU_CHECK(cuMemMap(end, chunk, 0, handle, 0));
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(end, chunk, &access, 1));  // the new chunk only
    return handle;
}

void shrink(CUdeviceptr last, std::size_t chunk, CUmemGenericAllocationHandle handle) {
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    CU_CHECK(cuMemUnmap(last, chunk));  // the addresses stay reserved
    CU_CHECK(cuMemRelease(handle));     // no mapping, no handle: the memory is freed
}
