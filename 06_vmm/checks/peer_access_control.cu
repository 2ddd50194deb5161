// Checks of section peer_access_control: times the peer access of ../peer_access_control.cu
// against the number of GPU 1's allocations, times one VMM grant, and in a child has GPU 0 read a
// granted and a not granted VMM allocation with peer access enabled.
#include "06_vmm/peer_access_control.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"
#include "common/vmm.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;
using tutorial::vmm_create;
using tutorial::vmm_free;
using tutorial::vmm_granularity;
using tutorial::vmm_map;
using tutorial::vmm_properties;
using tutorial::vmm_release;
using tutorial::vmm_reserve;
using tutorial::vmm_unmap;

namespace {

constexpr std::size_t block = 2 << 20;  // each cudaMalloc on the owner
constexpr std::uint32_t seed = 51;
constexpr int timed_calls = 5;

struct EnableCost {
    int allocations;               // cudaMalloc allocations the owner had
    double enable_ms, disable_ms;  // medians
};

// Times cudaDeviceEnablePeerAccess (and the disable that undoes it) with GPU 0 current.
EnableCost time_enable(int allocations) {
    CUDA_CHECK(cudaSetDevice(user));
    std::vector<double> enable, disable;
    for (int i = 0; i < timed_calls; ++i) {
        tutorial::HostTimer timer;
        enable_peer_access();
        enable.push_back(timer.elapsed_ms());
        timer.restart();
        disable_peer_access();
        disable.push_back(timer.elapsed_ms());
    }
    return {allocations, tutorial::median(enable), tutorial::median(disable)};
}

// What GPU `user` may do with the memory at `address`, as cuMemGetAccess reports it.
const char* user_access(CUdeviceptr address) {
    return tutorial::vmm_access_name(tutorial::vmm_access(address, user));
}

// A mapped VMM allocation on the owner, which the owner itself may use.
CUdeviceptr owner_granule(std::size_t& bytes) {
    const CUmemAllocationProp prop = vmm_properties(owner);
    bytes = vmm_granularity(prop);
    const CUmemGenericAllocationHandle memory = vmm_create(prop, bytes);
    const CUdeviceptr address = vmm_reserve(bytes, 0);
    vmm_map(address, bytes, memory);
    vmm_release(memory);  // the mapping keeps the memory
    tutorial::vmm_set_access(address, bytes, owner);
    return address;
}

// The median time of granting GPU 0 one fresh VMM allocation, with the owner's cudaMalloc
// allocations all present.
double time_grant() {
    std::vector<double> ms;
    for (int i = 0; i < timed_calls; ++i) {
        std::size_t bytes = 0;
        const CUdeviceptr address = owner_granule(bytes);
        tutorial::HostTimer timer;
        grant_user(address, bytes);
        ms.push_back(timer.elapsed_ms());
        vmm_unmap(address, bytes);
        vmm_free(address, bytes);
    }
    return tutorial::median(ms);
}

struct ControlResult {
    std::vector<EnableCost> enable;
    double grant_ms = 0;
    tutorial::ChildResult child;
};

ControlResult measure_control(const std::vector<int>& counts) {
    ControlResult r;
    CUDA_CHECK(cudaSetDevice(user));
    CUDA_CHECK(cudaFree(nullptr));  // both contexts exist before anything is timed
    CUDA_CHECK(cudaSetDevice(owner));
    CUDA_CHECK(cudaFree(nullptr));
    std::vector<void*> blocks;
    for (int count : counts) {
        CUDA_CHECK(cudaSetDevice(owner));
        while (static_cast<int>(blocks.size()) < count) {
            blocks.push_back(nullptr);
            CUDA_CHECK(cudaMalloc(&blocks.back(), block));
        }
        r.enable.push_back(time_enable(count));
    }
    r.grant_ms = time_grant();
    CUDA_CHECK(cudaSetDevice(owner));
    for (void* b : blocks) CUDA_CHECK(cudaFree(b));
    r.child = tutorial::run_child("peer_vmm_grant", {});
    return r;
}

}  // namespace

// Child role: two VMM allocations on GPU 1; GPU 0 is granted the first only. Peer access is
// enabled too, to show it does not reach VMM memory: cuMemGetAccess reports GPU 0's access to
// each. A kernel on GPU 0 reads the first (checked), then the second: on this driver the check
// reports the fault and ends the child.
int child_peer_vmm_grant(const std::vector<std::string>&) {
    CUDA_CHECK(cudaSetDevice(owner));
    std::size_t bytes = 0;
    const CUdeviceptr granted = owner_granule(bytes);
    const CUdeviceptr not_granted = owner_granule(bytes);
    const std::size_t count = bytes / sizeof(std::uint32_t);
    fill_on_device(reinterpret_cast<std::uint32_t*>(granted), count, seed);
    fill_on_device(reinterpret_cast<std::uint32_t*>(not_granted), count, seed);
    grant_user(granted, bytes);
    CUDA_CHECK(cudaSetDevice(user));
    CUDA_CHECK(cudaDeviceEnablePeerAccess(owner, 0));
    std::printf("cuMemGetAccess for GPU %d, peer access enabled: granted %s, not granted %s\n",
                user, user_access(granted), user_access(not_granted));
    const std::size_t wrong =
        mismatches_on_device(reinterpret_cast<const std::uint32_t*>(granted), count, seed);
    std::printf("GPU %d read the granted allocation: %zu of %zu values wrong\n", user, wrong,
                count);
    std::printf("GPU %d reads the allocation it was not granted, peer access enabled...\n", user);
    mismatches_on_device(reinterpret_cast<const std::uint32_t*>(not_granted), count, seed);
    std::printf("the read went through\n");
    return 0;
}

tutorial::Result run_peer_access_control(tutorial::Context& ctx) {
    const int gpus = tutorial::device_count();
    if (gpus < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", gpus));
    // Without peer access, enabling it (or a peer read) would stop the run: say why instead.
    const std::string no_peer = tutorial::why_no_peer_access(gpus);
    if (!no_peer.empty()) return ctx.skip(no_peer);
    if (!tutorial::vmm_supported(owner)) return ctx.skip("VMM is not supported on this device");
    const std::vector<int> counts =
        ctx.quick() ? std::vector<int>{0, 64, 512} : std::vector<int>{0, 64, 256, 1024};
    std::printf(
        "GPU %d gets cudaMalloc allocations of %s, up to %s in all. At each count, with GPU %d\n"
        "current, cudaDeviceEnablePeerAccess(%d) and cudaDeviceDisablePeerAccess(%d) are timed\n"
        "(median of %d). Then cuMemSetAccess granting GPU %d one VMM allocation on GPU %d.\n\n",
        owner, tutorial::format_bytes(block).c_str(),
        tutorial::format_bytes(block * counts.back()).c_str(), user, owner, owner, timed_calls,
        user, owner);
    const ControlResult r = measure_control(counts);
    CUDA_CHECK(cudaSetDevice(ctx.device));

    tutorial::Table table({{"GPU 1's cudaMalloc allocations", tutorial::Align::right},
                           {"EnablePeerAccess ms", tutorial::Align::right},
                           {"DisablePeerAccess ms", tutorial::Align::right}});
    for (const EnableCost& e : r.enable) {
        table.add_row({format("%d", e.allocations), format("%.3f", e.enable_ms),
                       format("%.3f", e.disable_ms)});
    }
    table.print();
    const EnableCost& none = r.enable.front();
    const EnableCost& most = r.enable.back();
    std::printf(
        "\ncuMemSetAccess granting GPU %d one %s VMM allocation, with all %d present: %.3f ms.\n"
        "\nIn a child process, two VMM allocations on GPU %d, only the first granted to GPU %d:\n",
        user, tutorial::format_bytes(2 << 20).c_str(), most.allocations, r.grant_ms, owner, user);
    tutorial::print_child_output(r.child);
    std::printf(
        "   The child %s.\n\n"
        "Peer access is all or nothing, for every allocation of the peer; VMM access is granted\n"
        "per range and per device, so its cost and its reach are the allocation's own.\n\n",
        r.child.describe().c_str());
    ctx.claim(tutorial::at_least(
        "cudaDeviceEnablePeerAccess costs more the more the peer has allocated "
        "(most allocations / none)",
        most.enable_ms / none.enable_ms, 3.0, "x",
        "the driver maps the peer's memory lazily, or in pieces too large to count"));
    ctx.claim(tutorial::at_least(
        "granting one VMM allocation costs far less than enabling peer access to all of them "
        "(enable / grant)",
        most.enable_ms / r.grant_ms, 3.0, "x", "the grant took as long as mapping everything"));
    const bool read_granted =
        r.child.output.find("the granted allocation: 0 of ") != std::string::npos;
    const bool access_as_granted =
        r.child.output.find("granted PROT_READWRITE, not granted PROT_NONE") != std::string::npos;
    const bool faulted = r.child.failed_with("cudaErrorIllegalAddress");
    ctx.claim(tutorial::documented(
        "only the granted VMM allocation is open to the peer, even with peer access enabled",
        read_granted && access_as_granted,
        format("cuMemGetAccess: %s; the granted one read %s",
               access_as_granted ? "granted PROT_READWRITE, not granted PROT_NONE"
                                 : "other flags (see the child's line)",
               read_granted ? "right" : "WRONG"),
        "peer access reached the VMM allocation, or the grant did not work",
        "Programming Guide, Virtual Memory Management (E.7, Control Access Rights), and Stream "
        "Ordered Memory Allocator (Device Accessibility for Multi-GPU Support)"));
    ctx.claim(tutorial::observed(
        "...and a peer kernel reading the one not granted fails with cudaErrorIllegalAddress",
        faulted, "the child " + r.child.describe() + (faulted ? ", cudaErrorIllegalAddress" : ""),
        "the Guide (E.7) says a kernel touching a range without access crashes the program, and "
        "names no error code"));
    return ctx.verdict(read_granted && access_as_granted,
                       "GPU 0 read the granted allocation right; cuMemGetAccess gave GPU 0 "
                       "PROT_READWRITE there and PROT_NONE on the other, peer access enabled");
}

TUTORIAL_SECTION(peer_access_control, run_peer_access_control);
TUTORIAL_CHILD(peer_vmm_grant, child_peer_vmm_grant);
