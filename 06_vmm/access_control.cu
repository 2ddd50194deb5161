// Section access_control: a mapping alone grants nothing; cuMemSetAccess grants a device no,
// read-only or read-write access to a range, and cuMemGetAccess says which it has.
// Built alone, from the course's folder (mkdir -p build first), then ./build/access_control:
//   nvcc -std=c++17 -I. 06_vmm/access_control.cu common/standalone.cu -o build/access_control
//   (or in 06_vmm/: nvcc -std=c++17 -I.. access_control.cu ../common/standalone.cu
//       -o ../build/access_control)  (on the same line)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

// Grants `device` the access `flags` to the range: a mapping alone grants nothing.
void set_access(CUdeviceptr address, std::size_t bytes, int device, CUmemAccess_flags flags) {
    static const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = flags;  // PROT_NONE, PROT_READ or PROT_READWRITE
    CU_CHECK(cuMemSetAccess(address, bytes, &access, 1));
}

// What `device` may do with the memory at `address` now.
unsigned long long access_flags(CUdeviceptr address, int device) {
    static const auto cuMemGetAccess = DRIVER_FUNCTION(cuMemGetAccess);
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = device;
    unsigned long long flags = 0;
    CU_CHECK(cuMemGetAccess(&flags, &location, address));
    return flags;
}

// One granule of physical memory, mapped, with no access granted yet (the handle is released at
// once: the mapping keeps the memory).
CUdeviceptr mapped_granule(int device, std::size_t& bytes) {
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);
    bytes = tutorial::vmm_granularity(prop);
    const CUmemGenericAllocationHandle memory = tutorial::vmm_create(prop, bytes);
    const CUdeviceptr address = tutorial::vmm_reserve(bytes, 0);
    tutorial::vmm_map(address, bytes, memory);
    tutorial::vmm_release(memory);
    return address;
}

// A kernel that writes one value: on a PROT_READ range, this write is what fails.
__global__ void write_one(std::uint32_t* data) {
    data[0] = 1;
}

// What the walkthrough found: cuMemGetAccess's answer after each grant, and what kernels read.
struct Found {
    unsigned long long before_grant = 0, read_only = 0, read_write = 0;
    bool read_only_sum_right = false;  // kernels read the PROT_READ range right
    std::size_t wrong = 0;             // values wrong once it was PROT_READWRITE again
};

Found walkthrough(int device) {
    Found found;
    // 1. Mapped, never granted: the range is not accessible to anyone.
    std::size_t bytes = 0;
    const CUdeviceptr address = mapped_granule(device, bytes);
    auto* data = reinterpret_cast<std::uint32_t*>(address);
    const std::size_t count = bytes / sizeof *data;
    found.before_grant = access_flags(address, device);

    // 2. Read-only: filled while it may still be written, then the write permission taken away.
    //    Kernels may read it (a kernel's write would fail: write_read_only below).
    set_access(address, bytes, device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    fill_on_device(data, count, 6);
    set_access(address, bytes, device, CU_MEM_ACCESS_FLAGS_PROT_READ);
    found.read_only = access_flags(address, device);
    found.read_only_sum_right = sum_on_device(data, count) == pattern_sum(count, 6);

    // 3. Read-write: ordinary device memory again.
    set_access(address, bytes, device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    found.read_write = access_flags(address, device);
    fill_on_device(data, count, 8);
    found.wrong = mismatches_on_device(data, count, 8);

    // 4. The mapping goes (and with it the memory), then the addresses.
    tutorial::vmm_unmap(address, bytes);
    tutorial::vmm_free(address, bytes);
    return found;
}

// The two mistakes, each the end of its program: a kernel reads a range before any grant...
std::size_t read_before_grant(int device) {
    std::size_t bytes = 0;
    const CUdeviceptr address = mapped_granule(device, bytes);
    return mismatches_on_device(reinterpret_cast<std::uint32_t*>(address), bytes / 4, 0);
}

// ...and a kernel writes a range it may only read.
void write_read_only(int device) {
    std::size_t bytes = 0;
    const CUdeviceptr address = mapped_granule(device, bytes);
    set_access(address, bytes, device, CU_MEM_ACCESS_FLAGS_PROT_READ);
    write_one<<<1, 1>>>(reinterpret_cast<std::uint32_t*>(address));
    CUDA_CHECK_LAUNCH_SYNC();
}

}  // namespace

#ifndef TUTORIAL_CHECKS
// ./access_control runs the walkthrough; ./access_control read_before_grant (or write_read_only)
// makes that mistake, and the program ends with the error it gets.
int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "read_before_grant") == 0) read_before_grant(0);
    if (argc > 1 && std::strcmp(argv[1], "write_read_only") == 0) write_read_only(0);
    const Found found = walkthrough(0);
    std::printf(
        "cuMemGetAccess: %s before any grant, %s, %s; reads of the read-only range %s, "
        "%zu values wrong read-write\n",
        tutorial::vmm_access_name(found.before_grant), tutorial::vmm_access_name(found.read_only),
        tutorial::vmm_access_name(found.read_write), found.read_only_sum_right ? "right" : "WRONG",
        found.wrong);
    return found.wrong == 0 && found.read_only_sum_right ? 0 : 1;
}
#endif
