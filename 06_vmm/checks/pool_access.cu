// Checks of section pool_access: runs the walkthrough of ../pool_access.cu (GPU 0 granted a pool
// of GPU 1's between two of its blocks), and in a child the mistake it avoids: peer access opens
// cudaMalloc memory, not the default pool's.
#include "06_vmm/pool_access.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"

#include <cstdint>
#include <string>
#include <vector>

using tutorial::format;

namespace {

// The Guide's Stream Ordered Memory Allocator chapter, "Device Accessibility for Multi-GPU
// Support" (not among the source documents here: its words cannot be checked by CI): pool
// memory does not follow peer access; cudaMemPoolSetAccess is what changes which devices can
// access a pool's allocations.
const tutorial::Entry pools_for_peers{
    "Programming Guide, Stream Ordered Memory Allocator (Device Accessibility for Multi-GPU "
    "Support)",
    "cudaMemPoolSetAccess", "can"};

const char* flags_name(cudaMemAccessFlags flags) {
    switch (flags) {
        case cudaMemAccessFlagsProtNone: return "ProtNone";
        case cudaMemAccessFlagsProtRead: return "ProtRead";
        case cudaMemAccessFlagsProtReadWrite: return "ProtReadWrite";
    }
    return "?";
}

}  // namespace

// Child role: the lesson's mistake. Peer access enabled, the user GPU reads a cudaMalloc block of
// the owner (allowed); cudaMemPoolGetAccess says what the user may do with the owner's default
// pool; then the user reads a cudaMallocAsync block from that pool. On this driver the second
// read ends the child with cudaErrorIllegalAddress.
int child_pool_peer_read(const std::vector<std::string>&) {
    const TwoBlocks b = owner_blocks_peer_access_on(4 << 20);
    std::printf("GPU %d read GPU %d's cudaMalloc block: %zu of %zu values wrong\n", user, owner,
                user_reads(b.plain, b.count), b.count);
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, owner));
    std::printf("cudaMemPoolGetAccess(GPU %d's default pool) for GPU %d: %s\n", owner, user,
                flags_name(access_of(pool, user)));
    std::printf("GPU %d reads GPU %d's cudaMallocAsync block, peer access enabled...\n", user,
                owner);
    std::fflush(stdout);
    user_reads(b.pooled, b.count);
    std::printf("the read went through\n");
    return 0;
}

tutorial::Result run_pool_access(tutorial::Context& ctx) {
    const int gpus = tutorial::device_count();
    if (gpus < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", gpus));
    // Without peer access, enabling it (or a peer read) would stop the run: say why instead.
    const std::string no_peer = tutorial::why_no_peer_access(gpus);
    if (!no_peer.empty()) return ctx.skip(no_peer);
    if (tutorial::device_attribute(owner, cudaDevAttrMemoryPoolsSupported) != 1) {
        return ctx.skip("memoryPoolsSupported = 0 on GPU 1");
    }
    const std::size_t bytes = ctx.quick() ? (16 << 20) : (256 << 20);
    tutorial::StepTimes times;
    const Found f = walkthrough(bytes);
    const double grant_ms = times.median_host_ms(pool_granted);
    CUDA_CHECK(cudaSetDevice(ctx.device));
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::printf(
        "A pool on GPU %d (cudaMemPoolCreate), and cudaMemPoolGetAccess for each GPU:\n"
        "  GPU %d (its own) %s, GPU %d %s\n"
        "One block of %s handed out and filled; then cudaMemPoolSetAccess(GPU %d, ReadWrite)\n"
        "(%.3f ms): GPU %d now %s. A second block handed out after the grant. Kernels on GPU %d:\n"
        "  the block from before the grant: %zu of %zu values wrong\n"
        "  the block from after it:         %zu of %zu values wrong\n"
        "  GPU %d wrote the second block; GPU %d found %zu of %zu values not as written\n\n",
        owner, owner, flags_name(f.owner_before), user, flags_name(f.user_before),
        tutorial::format_bytes(bytes).c_str(), user, grant_ms, user, flags_name(f.user_after), user,
        f.earlier_wrong, count, f.later_wrong, count, user, owner, f.written_wrong, count);
    std::printf("In a child process, peer access from GPU %d to GPU %d enabled:\n", user, owner);
    const tutorial::ChildResult child = tutorial::run_child("pool_peer_read", {});
    tutorial::print_child_output(child);
    std::printf("   The child %s.\n\n", child.describe().c_str());

    // cudaMemPoolCreate: "the pool's memory will be accessible from the device it is allocated
    // on". That the peer has no access (ProtNone) it does not say: observed.
    const bool own_access = f.owner_before == cudaMemAccessFlagsProtReadWrite;
    const bool peer_closed = f.user_before == cudaMemAccessFlagsProtNone;
    ctx.claim(tutorial::documented(
        "new_pool_own_gpu", "a new pool's memory is accessible from its own GPU", own_access,
        format("cudaMemPoolGetAccess: GPU %d %s", owner, flags_name(f.owner_before)),
        "this driver does not open a new pool to its own GPU",
        tutorial::Entry{"Runtime API reference: cudaMemPoolCreate", "accessible", "will"}));
    ctx.claim(tutorial::observed(
        "new_pool_not_peer", "...and not from the peer", peer_closed,
        format("cudaMemPoolGetAccess: GPU %d %s", user, flags_name(f.user_before)),
        "the cudaMemPoolCreate entry says a pool's memory will be accessible from its own device "
        "by default, and nothing of other devices"));
    const bool plain_read = child.output.find(" cudaMalloc block: 0 of") != std::string::npos;
    const bool pool_closed =
        child.output.find(format("default pool) for GPU %d: ProtNone", user)) != std::string::npos;
    const bool faulted = child.failed_with("cudaErrorIllegalAddress");
    ctx.claim(tutorial::documented(
        "peer_access_not_pools",
        "cudaDeviceEnablePeerAccess opens cudaMalloc memory to the peer, not pool memory",
        plain_read && pool_closed,
        format("cudaMalloc block: %s; the default pool, cudaMemPoolGetAccess: %s",
               plain_read ? "read right" : "NOT read right",
               pool_closed ? "ProtNone" : "other flags (see the child's line)"),
        "peer access reached the pool's memory, or the plain read failed", pools_for_peers));
    ctx.claim(tutorial::observed(
        "pool_peer_read_faults",
        "...and a peer kernel reading a block of that pool fails with cudaErrorIllegalAddress",
        faulted, "the child " + child.describe(),
        "the Guide says pool memory is not open to a peer without cudaMemPoolSetAccess, and names "
        "no error for a kernel that reads it anyway"));
    const bool granted = f.user_after == cudaMemAccessFlagsProtReadWrite && f.earlier_wrong == 0 &&
                         f.later_wrong == 0 && f.written_wrong == 0;
    ctx.claim(tutorial::documented(
        "set_access_grants_all",
        "cudaMemPoolSetAccess grants the peer every block of the pool, handed out before or after",
        granted,
        format("%zu and %zu values wrong in the peer's reads, %zu in what it wrote",
               f.earlier_wrong, f.later_wrong, f.written_wrong),
        "the grant did not cover one of the blocks", pools_for_peers));
    return ctx.verdict(own_access && plain_read && pool_closed && granted,
                       "the new pool was open to its own GPU, cudaMemPoolSetAccess granted the "
                       "peer, and peer access did not open pool memory");
}

TUTORIAL_SECTION(pool_access, run_pool_access);
TUTORIAL_CHILD(pool_peer_read, child_pool_peer_read);
