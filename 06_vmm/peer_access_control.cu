// Section peer_access_control (2 or more GPUs): two ways to let GPU 0 use GPU 1's memory: peer
// access maps all its cudaMalloc memory, cuMemSetAccess one VMM allocation. (The checks time both,
// and in a child GPU 0 reads a range it was not granted.)
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cstddef>

namespace {

constexpr int user = 0;   // the GPU that is given access
constexpr int owner = 1;  // the GPU whose memory it is

// Step 1. Peer access: with GPU `user` current, this maps every cudaMalloc allocation the owner
// has, and every later one, for the user; its cost grows with their number.
void enable_peer_access() {
    CUDA_CHECK(cudaDeviceEnablePeerAccess(owner, 0));
}

void disable_peer_access() {
    CUDA_CHECK(cudaDeviceDisablePeerAccess(owner));
}

// Step 2. With VMM, access is granted one allocation at a time: GPU `user` may read and write this
// range, and no other VMM memory of the owner's, peer access or not.
void grant_user(CUdeviceptr address, std::size_t bytes) {
    static const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = user;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(address, bytes, &access, 1));
}

}  // namespace
