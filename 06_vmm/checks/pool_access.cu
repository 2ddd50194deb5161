// Checks of section pool_access: grants GPU 0 the pool of ../pool_access.cu between two blocks,
// has GPU 0 read both and write one, and in a child shows that peer access opens cudaMalloc
// memory, not the default pool's.
#include "06_vmm/pool_access.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;

namespace {

constexpr std::uint32_t seed = 57;
constexpr std::uint32_t user_seed = 58;  // what the user writes
// Where the reference says who may use a pool's memory: its own GPU by default, not a peer that
// merely has peer access, and every block once cudaMemPoolSetAccess grants it.
constexpr const char* pools_for_peers =
    "Programming Guide, Stream Ordered Memory Allocator (Device Accessibility for Multi-GPU "
    "Support); Runtime API reference: cudaMemPoolCreate, cudaMemPoolSetAccess";

const char* flags_name(cudaMemAccessFlags flags) {
    switch (flags) {
        case cudaMemAccessFlagsProtNone: return "ProtNone";
        case cudaMemAccessFlagsProtRead: return "ProtRead";
        case cudaMemAccessFlagsProtReadWrite: return "ProtReadWrite";
    }
    return "?";
}

struct AccessResult {
    cudaMemAccessFlags owner_before, user_before, user_after;
    double grant_ms = 0;
    std::size_t count = 0;
    std::size_t earlier_wrong = 0;  // the user's read of a block handed out before the grant
    std::size_t later_wrong = 0;    // ...and of one handed out after it
    std::size_t written_wrong = 0;  // the owner's check of what the user wrote into the later one
};

AccessResult grant_and_use(std::size_t bytes) {
    CUDA_CHECK(cudaSetDevice(owner));
    cudaMemPool_t pool = owner_pool();
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    AccessResult r{access_of(pool, owner), access_of(pool, user), cudaMemAccessFlagsProtNone};
    r.count = bytes / sizeof(std::uint32_t);
    std::uint32_t* earlier = nullptr;
    std::uint32_t* later = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&earlier, bytes, pool, stream));
    fill_on_device_async(earlier, r.count, seed, stream);

    tutorial::HostTimer timer;
    grant_user(pool);
    r.grant_ms = timer.elapsed_ms();
    r.user_after = access_of(pool, user);
    CUDA_CHECK(cudaMallocFromPoolAsync(&later, bytes, pool, stream));
    fill_on_device_async(later, r.count, seed, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));

    CUDA_CHECK(cudaSetDevice(user));  // kernels on the user GPU, reading the owner's memory
    r.earlier_wrong = mismatches_on_device(earlier, r.count, seed);
    r.later_wrong = mismatches_on_device(later, r.count, seed);
    fill_on_device(later, r.count, user_seed);
    CUDA_CHECK(cudaSetDevice(owner));
    r.written_wrong = mismatches_on_device(later, r.count, user_seed);
    CUDA_CHECK(cudaFreeAsync(earlier, stream));
    CUDA_CHECK(cudaFreeAsync(later, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    return r;
}

}  // namespace

// Child role: peer access enabled, the user GPU reads a cudaMalloc block of the owner (allowed);
// cudaMemPoolGetAccess says what the user may do with the owner's default pool, which peer access
// does not cover; then the user reads a cudaMallocAsync block from that pool. On this driver the
// second read ends the child with cudaErrorIllegalAddress.
int child_pool_peer_read(const std::vector<std::string>&) {
    constexpr std::size_t bytes = 4 << 20;
    constexpr std::size_t count = bytes / sizeof(std::uint32_t);
    CUDA_CHECK(cudaSetDevice(owner));
    std::uint32_t* plain = nullptr;
    std::uint32_t* pooled = nullptr;
    CUDA_CHECK(cudaMalloc(&plain, bytes));
    CUDA_CHECK(cudaMallocAsync(&pooled, bytes, nullptr));
    fill_on_device(plain, count, seed);
    fill_on_device(pooled, count, seed);
    CUDA_CHECK(cudaSetDevice(user));
    CUDA_CHECK(cudaDeviceEnablePeerAccess(owner, 0));
    std::printf("GPU %d read GPU %d's cudaMalloc block: %zu of %zu values wrong\n", user, owner,
                mismatches_on_device(plain, count, seed), count);
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, owner));
    std::printf("cudaMemPoolGetAccess(GPU %d's default pool) for GPU %d: %s\n", owner, user,
                flags_name(access_of(pool, user)));
    std::printf("GPU %d reads GPU %d's cudaMallocAsync block, peer access enabled...\n", user,
                owner);
    mismatches_on_device(pooled, count, seed);
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
    const AccessResult r = grant_and_use(bytes);
    CUDA_CHECK(cudaSetDevice(ctx.device));
    std::printf(
        "A pool on GPU %d (cudaMemPoolCreate), and cudaMemPoolGetAccess for each GPU:\n"
        "  GPU %d (its own) %s, GPU %d %s\n"
        "One block of %s handed out and filled; then cudaMemPoolSetAccess(GPU %d, ReadWrite)\n"
        "(%.3f ms): GPU %d now %s. A second block handed out after the grant. Kernels on GPU %d:\n"
        "  the block from before the grant: %zu of %zu values wrong\n"
        "  the block from after it:         %zu of %zu values wrong\n"
        "  GPU %d wrote the second block; GPU %d found %zu of %zu values not as written\n\n",
        owner, owner, flags_name(r.owner_before), user, flags_name(r.user_before),
        tutorial::format_bytes(bytes).c_str(), user, r.grant_ms, user, flags_name(r.user_after),
        user, r.earlier_wrong, r.count, r.later_wrong, r.count, user, owner, r.written_wrong,
        r.count);
    std::printf("In a child process, peer access from GPU %d to GPU %d enabled:\n", user, owner);
    const tutorial::ChildResult child = tutorial::run_child("pool_peer_read", {});
    tutorial::print_child_output(child);
    std::printf("   The child %s.\n\n", child.describe().c_str());

    const bool as_created = r.owner_before == cudaMemAccessFlagsProtReadWrite &&
                            r.user_before == cudaMemAccessFlagsProtNone;
    ctx.claim(
        tutorial::documented("a new pool is for its own GPU only", as_created,
                             format("cudaMemPoolGetAccess: GPU %d %s, GPU %d %s", owner,
                                    flags_name(r.owner_before), user, flags_name(r.user_before)),
                             "this driver opens new pools to peers", pools_for_peers));
    const bool plain_read = child.output.find(" cudaMalloc block: 0 of") != std::string::npos;
    const bool pool_closed =
        child.output.find(format("default pool) for GPU %d: ProtNone", user)) != std::string::npos;
    const bool faulted = child.failed_with("cudaErrorIllegalAddress");
    ctx.claim(tutorial::documented(
        "cudaDeviceEnablePeerAccess opens cudaMalloc memory to the peer, not pool memory",
        plain_read && pool_closed,
        format("cudaMalloc block: %s; the default pool, cudaMemPoolGetAccess: %s",
               plain_read ? "read right" : "NOT read right",
               pool_closed ? "ProtNone" : "other flags (see the child's line)"),
        "peer access reached the pool's memory, or the plain read failed", pools_for_peers));
    ctx.claim(tutorial::observed(
        "...and a peer kernel reading a block of that pool fails with cudaErrorIllegalAddress",
        faulted, "the child " + child.describe(),
        "the Guide says pool memory is not open to a peer without cudaMemPoolSetAccess, and names "
        "no error for a kernel that reads it anyway"));
    const bool granted = r.user_after == cudaMemAccessFlagsProtReadWrite && r.earlier_wrong == 0 &&
                         r.later_wrong == 0 && r.written_wrong == 0;
    ctx.claim(tutorial::documented(
        "cudaMemPoolSetAccess grants the peer every block of the pool, handed out before or after",
        granted,
        format("%zu and %zu values wrong in the peer's reads, %zu in what it wrote",
               r.earlier_wrong, r.later_wrong, r.written_wrong),
        "the grant did not cover one of the blocks", pools_for_peers));
    return ctx.verdict(as_created && plain_read && pool_closed && granted,
                       "the pool was its GPU's alone until cudaMemPoolSetAccess granted the "
                       "peer, and peer access did not open pool memory");
}

TUTORIAL_SECTION(pool_access, run_pool_access);
TUTORIAL_CHILD(pool_peer_read, child_pool_peer_read);
