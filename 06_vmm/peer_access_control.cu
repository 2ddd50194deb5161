// Section peer_access_control (2 GPUs): peer access opens all cudaMalloc memory, VMM one range.
// Built alone, from the course's folder (mkdir -p build first), then ./build/peer_access_control:
//   nvcc -std=c++17 -I. 06_vmm/peer_access_control.cu common/standalone.cu
//       -o build/peer_access_control  (on the same line)
//   (or in 06_vmm/: nvcc -std=c++17 -I.. peer_access_control.cu ../common/standalone.cu
//       -o ../build/peer_access_control)  (on the same line)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"
#include "common/vmm.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr int user = 0;   // the GPU that is given access
constexpr int owner = 1;  // the GPU whose memory it is

// With VMM, access is granted one allocation at a time: GPU `user` may read and write this
// range, and no other VMM memory of the owner's, peer access or not.
void grant_user(CUdeviceptr address, std::size_t bytes) {
    static const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = user;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(address, bytes, &access, 1));
}

// One granule of VMM memory on the owner, mapped, which the owner itself may use.
CUdeviceptr owner_granule(std::size_t& bytes) {
    const CUmemAllocationProp prop = tutorial::vmm_properties(owner);
    bytes = tutorial::vmm_granularity(prop);
    const CUmemGenericAllocationHandle memory = tutorial::vmm_create(prop, bytes);
    const CUdeviceptr address = tutorial::vmm_reserve(bytes, 0);
    tutorial::vmm_map(address, bytes, memory);
    tutorial::vmm_release(memory);  // the mapping keeps the memory
    tutorial::vmm_set_access(address, bytes, owner);
    return address;
}

// What the walkthrough found: what GPU `user` may do with the VMM allocation after the grant.
struct Found {
    unsigned long long granted = 0;
};

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step peer_on{"peer access enabled: every cudaMalloc block opened"};
constexpr tutorial::Step peer_off{"peer access disabled again"};
constexpr tutorial::Step one_granted{"one VMM allocation granted to the user"};

// The owner has `allocations` cudaMalloc blocks of 2 MiB when peer access is enabled, then
// disabled, and when one VMM allocation is granted instead.
Found walkthrough(int allocations) {
    Found found;
    // 0. Both GPUs' contexts exist before anything else (cudaFree(nullptr) makes one).
    CUDA_CHECK(cudaSetDevice(user));
    CUDA_CHECK(cudaFree(nullptr));
    CUDA_CHECK(cudaSetDevice(owner));
    CUDA_CHECK(cudaFree(nullptr));
    // 1. The owner's cudaMalloc memory.
    std::vector<void*> blocks(allocations, nullptr);
    for (void*& block : blocks) CUDA_CHECK(cudaMalloc(&block, std::size_t{2} << 20));
    // 2. Peer access, with GPU `user` current: it maps every cudaMalloc allocation the owner has,
    //    and every later one, for the user. Disabling it undoes that.
    CUDA_CHECK(cudaSetDevice(user));
    {
        const tutorial::During during(peer_on);
        CUDA_CHECK(cudaDeviceEnablePeerAccess(owner, 0));
    }
    {
        const tutorial::During during(peer_off);
        CUDA_CHECK(cudaDeviceDisablePeerAccess(owner));
    }
    // 3. With VMM: one allocation of the owner's, granted to the user alone.
    CUDA_CHECK(cudaSetDevice(owner));
    std::size_t bytes = 0;
    const CUdeviceptr address = owner_granule(bytes);
    {
        const tutorial::During during(one_granted);
        grant_user(address, bytes);
    }
    found.granted = tutorial::vmm_access(address, user);
    // 4. Torn down.
    tutorial::vmm_unmap(address, bytes);
    tutorial::vmm_free(address, bytes);
    for (void* block : blocks) CUDA_CHECK(cudaFree(block));
    return found;
}

// The mistake the grant avoids: two VMM allocations on the owner, only the first granted to the
// user, peer access enabled as well. Kernels on the user then read the first (right) and the
// second, which peer access does not open: that read faults.
struct TwoRanges {
    CUdeviceptr granted = 0, not_granted = 0;
    std::size_t bytes = 0;
};

TwoRanges grant_one_of_two() {
    CUDA_CHECK(cudaSetDevice(owner));
    TwoRanges r;
    r.granted = owner_granule(r.bytes);
    r.not_granted = owner_granule(r.bytes);
    fill_on_device(reinterpret_cast<std::uint32_t*>(r.granted), r.bytes / 4, 51);
    fill_on_device(reinterpret_cast<std::uint32_t*>(r.not_granted), r.bytes / 4, 51);
    grant_user(r.granted, r.bytes);
    CUDA_CHECK(cudaSetDevice(user));
    CUDA_CHECK(cudaDeviceEnablePeerAccess(owner, 0));
    return r;
}

// A kernel on the user GPU reads the owner's range: the values not as filled.
std::size_t user_reads(CUdeviceptr address, std::size_t bytes) {
    CUDA_CHECK(cudaSetDevice(user));
    return mismatches_on_device(reinterpret_cast<const std::uint32_t*>(address), bytes / 4, 51);
}

}  // namespace

#ifndef TUTORIAL_CHECKS
// ./peer_access_control runs the walkthrough; with any argument it makes the mistake instead.
int main(int argc, char**) {
    int gpus = 0;
    CUDA_CHECK(cudaGetDeviceCount(&gpus));
    if (gpus < 2) {
        std::printf(
            "SKIP: peer_access_control: a range granted to another GPU needs 2 GPUs; this "
            "machine has %d\n",
            gpus);
        return 77;  // as the course says a missing GPU
    }
    if (argc > 1) {
        const TwoRanges r = grant_one_of_two();
        std::printf("granted: %zu values wrong\n", user_reads(r.granted, r.bytes));
        std::printf("not granted: %zu values wrong\n", user_reads(r.not_granted, r.bytes));
        return 0;
    }
    const int allocations = 1024;  // 2 MiB each: 2 GiB on GPU 1
    walkthrough(0);  // the first run makes both contexts and pays the first grant's one-time costs
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    walkthrough(0);
    const Found found = walkthrough(allocations);
    times.print();  // medians of the two runs
    // The card's number: enabling peer access with the owner's blocks against none, and the grant.
    const std::vector<double> enable_ms = times.host_ms(peer_on);
    const std::vector<double> grant_ms = times.host_ms(one_granted);
    std::printf(
        "%.3f ms to enable peer access when GPU %d held %d cudaMalloc allocations, %.3f "
        "ms with none (%.1fx), while a cuMemSetAccess grant took %.3f ms\n",
        enable_ms[1], owner, allocations, enable_ms[0], enable_ms[1] / enable_ms[0], grant_ms[1]);
    std::printf("GPU %d's access to the granted VMM allocation: %s\n", user,
                tutorial::vmm_access_name(found.granted));
    return 0;
}
#endif
