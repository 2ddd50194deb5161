// Section sleep_wake: give a buffer's physical memory back to the driver while keeping its
// addresses, then put memory behind the same addresses again.
// Built alone, from the course's folder (mkdir -p build first), then ./build/sleep_wake:
//   nvcc -std=c++17 -I. 06_vmm/sleep_wake.cu common/standalone.cu -o build/sleep_wake
//   (or in 06_vmm/: nvcc -std=c++17 -I.. sleep_wake.cu ../common/standalone.cu
//       -o ../build/sleep_wake)  (on the same line)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"
#include "common/vmm.hpp"

#include <cstdint>
#include <cstdio>

namespace {

struct Sleeper {
    CUmemAllocationProp prop;             // what kind of physical memory
    std::size_t bytes;                    // a multiple of the granularity
    CUdeviceptr address;                  // reserved once, valid through every sleep
    CUmemGenericAllocationHandle memory;  // the physical memory, while awake
};

// The buffer's life, in the order the walkthrough calls it (their code follows the walkthrough):
// reserved, mapped and granted; saved, unmapped and released; new memory mapped at the same
// addresses; granted and restored; unmapped, released and its addresses freed for good.
Sleeper allocate(int device, std::size_t wanted);
void put_to_sleep(Sleeper& s, void* pinned_copy);
void remap(Sleeper& s);
void grant_and_restore(const Sleeper& s, const void* pinned_copy);
void free_for_good(Sleeper& s);

// What the walkthrough found.
struct Found {
    std::size_t bytes = 0;              // the buffer, whole granules
    bool same_address = false;          // woken at the addresses reserved at first
    unsigned long long new_access = 0;  // cuMemGetAccess between cuMemMap and cuMemSetAccess
    std::size_t wrong = 0;              // values read through the pointer taken before the sleep
};

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step sleep_step{"asleep: saved to host memory, unmapped, released"};
constexpr tutorial::Step wake_step{"awake again: new memory at the same addresses, restored"};

Found walkthrough(int device, std::size_t wanted) {
    Found found;
    // 1. Awake: mapped, filled with known values; a pointer into it is taken and kept.
    Sleeper s = allocate(device, wanted);
    found.bytes = s.bytes;
    const CUdeviceptr reserved = s.address;
    auto* data = reinterpret_cast<std::uint32_t*>(s.address);
    const std::size_t count = s.bytes / sizeof *data;
    fill_on_device(data, count, 46);
    void* pinned_copy = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned_copy, s.bytes));

    // 2. Asleep: saved to host memory, unmapped, released. The addresses stay reserved.
    {
        const tutorial::During during(sleep_step);
        put_to_sleep(s, pinned_copy);
    }
    // 3. Awake again: new memory at the same addresses, with no access until it is granted.
    {
        const tutorial::During during(wake_step);
        remap(s);
        found.new_access = tutorial::vmm_access(s.address, device);
        grant_and_restore(s, pinned_copy);
    }
    found.same_address = s.address == reserved;

    // 4. The pointer taken before the sleep reads the saved data; then everything goes.
    found.wrong = mismatches_on_device(data, count, 46);
    free_for_good(s);
    CUDA_CHECK(cudaFreeHost(pinned_copy));
    return found;
}

// Reserve the addresses and map memory behind them, as in `basics`. The handle is kept:
// releasing it is what gives the memory back when asleep.
Sleeper allocate(int device, std::size_t wanted) {
    const auto cuMemGetAllocationGranularity = DRIVER_FUNCTION(cuMemGetAllocationGranularity);
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    Sleeper s{};
    s.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    s.prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    s.prop.location.id = device;
    std::size_t granularity = 0;
    CU_CHECK(
        cuMemGetAllocationGranularity(&granularity, &s.prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    s.bytes = (wanted + granularity - 1) / granularity * granularity;
    CU_CHECK(cuMemAddressReserve(&s.address, s.bytes, granularity, 0, 0));
    CU_CHECK(cuMemCreate(&s.memory, s.bytes, &s.prop, 0));
    CU_CHECK(cuMemMap(s.address, s.bytes, 0, s.memory, 0));
    CUmemAccessDesc access{};
    access.location = s.prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(s.address, s.bytes, &access, 1));
    return s;
}

// Sleep: save the contents to pinned host memory, unmap, release the handle. With no
// mapping and no handle left the driver frees the memory; the range stays a reservation.
void put_to_sleep(Sleeper& s, void* pinned_copy) {
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    CUDA_CHECK(cudaMemcpy(pinned_copy, reinterpret_cast<void*>(s.address), s.bytes,
                          cudaMemcpyDeviceToHost));
    CU_CHECK(cuMemUnmap(s.address, s.bytes));
    CU_CHECK(cuMemRelease(s.memory));
    s.memory = 0;
}

// Wake: new physical memory, mapped at the very same addresses. A new mapping starts
// with no access at all, so it must be granted again before anything touches it.
void remap(Sleeper& s) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    CU_CHECK(cuMemCreate(&s.memory, s.bytes, &s.prop, 0));
    CU_CHECK(cuMemMap(s.address, s.bytes, 0, s.memory, 0));
}

void grant_and_restore(const Sleeper& s, const void* pinned_copy) {
    const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    CUmemAccessDesc access{};
    access.location = s.prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(s.address, s.bytes, &access, 1));
    CUDA_CHECK(cudaMemcpy(reinterpret_cast<void*>(s.address), pinned_copy, s.bytes,
                          cudaMemcpyHostToDevice));
}

// Done for good: the mapping, the handle, then the addresses.
void free_for_good(Sleeper& s) {
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    CU_CHECK(cuMemUnmap(s.address, s.bytes));
    CU_CHECK(cuMemRelease(s.memory));
    CU_CHECK(cuMemAddressFree(s.address, s.bytes));
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(0, std::size_t{256} << 20);
    times.print();
    // The card's number is a share of free device memory, read at the steps in the chapter's
    // program; alone, the lesson shows what sleeping and waking took.
    std::printf(
        "%zu MiB put to sleep in %.1f ms, woken in %.1f ms; how much of it went back to the "
        "driver while asleep (free device memory at the steps): ./build/bin/06_vmm "
        "sleep_wake\n",
        found.bytes >> 20, times.median_host_ms(sleep_step), times.median_host_ms(wake_step));
    std::printf(
        "%zu bytes put to sleep and woken %s; before cuMemSetAccess the new mapping had "
        "%s; %zu values wrong through the old pointer\n",
        found.bytes, found.same_address ? "at the same addresses" : "ELSEWHERE",
        tutorial::vmm_access_name(found.new_access), found.wrong);
    return found.wrong == 0 ? 0 : 1;
}
#endif
