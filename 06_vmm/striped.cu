// Section striped (2 or more GPUs): one range of addresses whose chunks are physical memory on
// different GPUs, one chunk each: to kernels, one array. (checks/striped.cu asks where each chunk
// lives and times each GPU writing its own chunk, a peer's and the whole range.)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

// One range of addresses whose chunks live on different GPUs: to kernels, one buffer.
struct Stripe {
    CUdeviceptr address = 0;
    std::size_t chunk = 0;  // bytes per GPU
    int gpus = 0;
    std::uint32_t* data() const { return reinterpret_cast<std::uint32_t*>(address); }
    std::size_t count() const { return chunk * gpus / sizeof(std::uint32_t); }
};

// Step 1. Reserves one range, maps chunk g to memory created on GPU g, then grants every GPU
// read-write access to the whole range with a single cuMemSetAccess.
Stripe make_stripe(int gpus, std::size_t wanted_chunk) {
    static const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    static const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    static const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    static const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    Stripe s;
    s.gpus = gpus;
    std::size_t granularity = 0;
    for (int g = 0; g < gpus; ++g) {
        granularity = std::max(granularity, tutorial::vmm_granularity(tutorial::vmm_properties(g)));
    }
    s.chunk = tutorial::round_up(wanted_chunk, granularity);
    CU_CHECK(cuMemAddressReserve(&s.address, s.chunk * gpus, 0, 0, 0));
    for (int g = 0; g < gpus; ++g) {
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = g;  // this chunk's memory is on GPU g
        CUmemGenericAllocationHandle memory = 0;
        CU_CHECK(cuMemCreate(&memory, s.chunk, &prop, 0));
        CU_CHECK(cuMemMap(s.address + g * s.chunk, s.chunk, 0, memory, 0));
        tutorial::vmm_release(memory);  // the mapping keeps it
    }
    std::vector<CUmemAccessDesc> access(gpus);
    for (int g = 0; g < gpus; ++g) {
        access[g].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access[g].location.id = g;
        access[g].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    CU_CHECK(cuMemSetAccess(s.address, s.chunk * gpus, access.data(), access.size()));
    return s;
}

// Step 2. The addresses say nothing about where the bytes are: cudaPointerGetAttributes names the
// device whose memory is behind an address (-1 if it is not device memory).
int owner_of(CUdeviceptr address) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, reinterpret_cast<void*>(address)));
    return attributes.type == cudaMemoryTypeDevice ? attributes.device : -1;
}

// Step 3. Each chunk was mapped on its own, so each is unmapped on its own; then the range goes
// back.
void free_stripe(const Stripe& s) {
    static const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    static const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    for (int g = 0; g < s.gpus; ++g) CU_CHECK(cuMemUnmap(s.address + g * s.chunk, s.chunk));
    CU_CHECK(cuMemAddressFree(s.address, s.chunk * s.gpus));
}

}  // namespace
