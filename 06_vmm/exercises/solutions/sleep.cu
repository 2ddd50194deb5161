// Exercise ex06_sleep (chapter 06_vmm), the course's solution: the contents saved to pinned host
// memory, the mapping and the handle given up so that the driver frees the memory; then new
// memory mapped behind the same reserved addresses, granted, and filled from the copy. The task
// is in ../sleep.cu.
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>

void go_to_sleep(CUdeviceptr address, std::size_t bytes, CUmemGenericAllocationHandle* memory,
                 void* pinned_copy) {
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    CUDA_CHECK(cudaMemcpy(pinned_copy, reinterpret_cast<const void*>(address), bytes,
                          cudaMemcpyDeviceToHost));
    CU_CHECK(cuMemUnmap(address, bytes));  // the range stays reserved
    CU_CHECK(cuMemRelease(*memory));       // no mapping, no handle: the memory is freed
    *memory = 0;
}

CUdeviceptr wake_up(CUdeviceptr address, std::size_t bytes, const CUmemAllocationProp& prop,
                    CUmemGenericAllocationHandle* memory, const void* pinned_copy) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    CU_CHECK(cuMemCreate(memory, bytes, &prop, 0));
    CU_CHECK(cuMemMap(address, bytes, 0, *memory, 0));
    // A new mapping starts with no access: grant it before anything touches the range.
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(address, bytes, &access, 1));
    CUDA_CHECK(
        cudaMemcpy(reinterpret_cast<void*>(address), pinned_copy, bytes, cudaMemcpyHostToDevice));
    return address;
}
