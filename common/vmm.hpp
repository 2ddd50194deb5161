// The steps of the driver's virtual memory management (VMM) API, one small checked function each,
// for chapters 06 (VMM itself) and 07 (sharing VMM memory between processes).
//
//   const CUmemAllocationProp prop = vmm_properties(device);
//   const std::size_t bytes = round_up(wanted, vmm_granularity(prop));
//   CUmemGenericAllocationHandle memory = vmm_create(prop, bytes);  // physical memory
//   CUdeviceptr address = vmm_reserve(bytes, 0);                    // a range of addresses
//   vmm_map(address, bytes, memory);                                // the two, joined
//   vmm_set_access(address, bytes, device);                         // ...and made usable
//   ...
//   vmm_unmap(address, bytes); vmm_release(memory); vmm_free(address, bytes);
#pragma once

#include <cuda.h>

#include <cstddef>

namespace tutorial {

bool vmm_supported(int device);

// Sizes given to cuMemCreate and cuMemMap, and mapping addresses, must be multiples of this. It
// depends on everything the allocation asks for (location, handle types, compression), so ask
// with the very properties that cuMemCreate will get.
std::size_t vmm_granularity(
    const CUmemAllocationProp& prop,
    CUmemAllocationGranularity_flags which = CU_MEM_ALLOC_GRANULARITY_MINIMUM);
std::size_t round_up(std::size_t bytes, std::size_t multiple);

// Device memory on `device`, exportable as `handle_types`, optionally compressible.
CUmemAllocationProp vmm_properties(int device,
                                   CUmemAllocationHandleType handle_types = CU_MEM_HANDLE_TYPE_NONE,
                                   bool compressible = false);

CUmemGenericAllocationHandle vmm_create(const CUmemAllocationProp& prop, std::size_t bytes);
CUdeviceptr vmm_reserve(std::size_t bytes, std::size_t alignment);
void vmm_map(CUdeviceptr address, std::size_t bytes, CUmemGenericAllocationHandle memory);
void vmm_set_access(CUdeviceptr address, std::size_t bytes, int device,
                    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
// What cuMemGetAccess says `device` may do with the mapping at `address` (a
// CU_MEM_ACCESS_FLAGS_PROT_... value), and that value's name ("PROT_READWRITE").
unsigned long long vmm_access(CUdeviceptr address, int device);
const char* vmm_access_name(unsigned long long flags);
void vmm_unmap(CUdeviceptr address, std::size_t bytes);
void vmm_release(CUmemGenericAllocationHandle memory);
void vmm_free(CUdeviceptr address, std::size_t bytes);

}  // namespace tutorial
