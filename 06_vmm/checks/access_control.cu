// Checks of section access_control: maps granules and grants them through ../access_control.cu;
// kernels read a range with no access and write a read-only one in child processes (they fault).
#include "06_vmm/access_control.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::ChildResult;
using tutorial::format;
using tutorial::print_child_output;
using tutorial::run_child;
using tutorial::vmm_create;
using tutorial::vmm_free;
using tutorial::vmm_granularity;
using tutorial::vmm_map;
using tutorial::vmm_properties;
using tutorial::vmm_release;
using tutorial::vmm_reserve;
using tutorial::vmm_unmap;

namespace {

std::string access_of(CUdeviceptr address, int device) {
    return tutorial::vmm_access_name(access_flags(address, device));
}

// Creates one granule of memory and maps it; the caller decides about access.
CUdeviceptr mapped_granule(int device, std::size_t& bytes) {
    const CUmemAllocationProp prop = vmm_properties(device);
    bytes = vmm_granularity(prop);
    const CUmemGenericAllocationHandle memory = vmm_create(prop, bytes);
    const CUdeviceptr address = vmm_reserve(bytes, 0);
    vmm_map(address, bytes, memory);
    vmm_release(memory);
    return address;
}

}  // namespace

// Child role: a kernel reads a range that was mapped but never given access.
int child_no_access(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    std::size_t bytes = 0;
    const CUdeviceptr address = mapped_granule(device, bytes);
    std::printf("mapped, no cuMemSetAccess: cuMemGetAccess says %s; a kernel reads it...\n",
                access_of(address, device).c_str());
    mismatches_on_device(reinterpret_cast<std::uint32_t*>(address), bytes / 4, 0);
    std::printf("the kernel finished\n");
    return 0;
}

// Child role: read-only access. A kernel's reads work; a kernel's write faults.
int child_read_only(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    std::size_t bytes = 0;
    const CUdeviceptr address = mapped_granule(device, bytes);
    auto* data = reinterpret_cast<std::uint32_t*>(address);
    const std::size_t count = bytes / 4;
    // Fill it while it is still writable, then take the write permission away.
    set_access(address, bytes, device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    fill_on_device(data, count, 6);
    set_access(address, bytes, device, CU_MEM_ACCESS_FLAGS_PROT_READ);
    const std::uint64_t total = sum_on_device(data, count);
    std::printf(
        "cuMemSetAccess(PROT_READ): cuMemGetAccess says %s; a kernel read all %zu values: "
        "sum %s\n",
        access_of(address, device).c_str(), count,
        total == pattern_sum(count, 6) ? "correct" : "WRONG");
    std::printf("a kernel writes one value...\n");
    write_one<<<1, 1>>>(data);
    CUDA_CHECK_LAUNCH_SYNC();
    std::printf("the write went through\n");
    return 0;
}

tutorial::Result run_access_control(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("VMM is not supported on this device");
    }
    const std::vector<std::string> device = {std::to_string(ctx.device)};

    std::printf("1. Mapped, never granted access (in a child process):\n");
    const ChildResult none = run_child("no_access", device);
    print_child_output(none);
    std::printf("   The child %s.\n", none.describe().c_str());
    const bool none_prot_none = none.output.find("says PROT_NONE") != std::string::npos;
    const bool none_faulted = none.failed_with("cudaErrorIllegalAddress");

    std::printf("\n2. Read-only access (in a child process):\n");
    const ChildResult read_only = run_child("read_only", device);
    print_child_output(read_only);
    std::printf("   The child %s.\n", read_only.describe().c_str());
    const bool reads_worked = read_only.output.find("PROT_READ;") != std::string::npos &&
                              read_only.output.find("sum correct") != std::string::npos;
    const bool write_faulted = read_only.failed_with("cudaErrorIllegalAddress");

    std::printf("\n3. Read-write access, here:\n");
    std::size_t bytes = 0;
    const CUdeviceptr address = mapped_granule(ctx.device, bytes);
    set_access(address, bytes, ctx.device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    const std::string full = access_of(address, ctx.device);
    auto* data = reinterpret_cast<std::uint32_t*>(address);
    fill_on_device(data, bytes / 4, 8);
    const std::size_t wrong = mismatches_on_device(data, bytes / 4, 8);
    std::printf("   cuMemGetAccess says %s; a kernel wrote and another checked: %zu wrong.\n",
                full.c_str(), wrong);
    const bool read_write_worked = full == "PROT_READWRITE" && wrong == 0;
    vmm_unmap(address, bytes);
    vmm_free(address, bytes);

    std::printf(
        "\nAccess is granted per range and per device. cudaEnablePeerAccess, by contrast, maps\n"
        "every allocation of one GPU into another, past and future; with VMM a program can\n"
        "share exactly the allocations it means to share, and nothing else pays for it.\n\n");
    ctx.claim(tutorial::documented(
        "a mapping alone grants nothing: cuMemGetAccess says PROT_NONE", none_prot_none,
        none_prot_none ? "PROT_NONE before any cuMemSetAccess" : "another answer; see its line",
        "the driver granted access by default",
        "Driver API reference: cuMemMap, CUmemAccess_flags (PROT_NONE, the default)"));
    ctx.claim(tutorial::observed(
        "...and a kernel reading it fails with cudaErrorIllegalAddress", none_faulted,
        "the child " + none.describe(),
        "the Guide (E.7) says a kernel touching a range without access crashes the program, and "
        "names no error code"));
    ctx.claim(tutorial::documented(
        "PROT_READ lets kernels read the range", reads_worked,
        reads_worked ? "cuMemGetAccess: PROT_READ, reads correct" : "reads wrong, or another grant",
        "the grant covered less than the range", "Driver API reference: cuMemSetAccess"));
    ctx.claim(tutorial::observed(
        "...and a kernel's write to it fails with cudaErrorIllegalAddress", write_faulted,
        write_faulted ? "the write failed with cudaErrorIllegalAddress"
                      : "the child " + read_only.describe(),
        "the reference calls PROT_READ read access and names no error for a write"));
    ctx.claim(tutorial::documented(
        "PROT_READWRITE makes the range ordinary device memory", read_write_worked,
        format("cuMemGetAccess: %s, %zu values wrong", full.c_str(), wrong),
        "the grant covered less than the range", "Driver API reference: cuMemSetAccess"));
    const int as_documented = none_prot_none + reads_worked + read_write_worked;
    return ctx.verdict(as_documented == 3,
                       format("%d of 3: cuMemGetAccess said PROT_NONE before any grant, PROT_READ "
                              "let kernels read, PROT_READWRITE read and write",
                              as_documented));
}

TUTORIAL_SECTION(access_control, run_access_control);
TUTORIAL_CHILD(no_access, child_no_access);
TUTORIAL_CHILD(read_only, child_read_only);
