// Section pool_access (2 or more GPUs): which GPUs may use a pool's memory. A pool's blocks are
// its own GPU's only, peer access or not, until cudaMemPoolSetAccess grants another GPU the pool.
// Built alone, from the course's folder (mkdir -p build first), then ./build/pool_access:
//   nvcc -std=c++17 -I. 06_vmm/pool_access.cu common/standalone.cu -o build/pool_access
//   (or in 06_vmm/: nvcc -std=c++17 -I.. pool_access.cu ../common/standalone.cu
//       -o ../build/pool_access)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>

namespace {

constexpr int user = 0;   // the GPU that is given access
constexpr int owner = 1;  // the GPU whose pool it is

// A pool on GPU `owner`; its blocks are the owner's alone until access is granted.
cudaMemPool_t owner_pool() {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = owner;
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    return pool;
}

// One call grants GPU `user` read-write access to every block of the pool, handed out before the
// call or after it.
void grant_user(cudaMemPool_t pool) {
    cudaMemAccessDesc grant{};
    grant.location.type = cudaMemLocationTypeDevice;
    grant.location.id = user;
    grant.flags = cudaMemAccessFlagsProtReadWrite;
    CUDA_CHECK(cudaMemPoolSetAccess(pool, &grant, 1));
}

// What `device` may do with the pool's blocks now.
cudaMemAccessFlags access_of(cudaMemPool_t pool, int device) {
    cudaMemLocation where{};
    where.type = cudaMemLocationTypeDevice;
    where.id = device;
    cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
    CUDA_CHECK(cudaMemPoolGetAccess(&flags, pool, &where));
    return flags;
}

// What the walkthrough found.
struct Found {
    cudaMemAccessFlags owner_before{}, user_before{}, user_after{};
    std::size_t earlier_wrong = 0;  // the user's read of a block handed out before the grant
    std::size_t later_wrong = 0;    // ...and of one handed out after it
    std::size_t written_wrong = 0;  // the owner's check of what the user wrote into the later one
};

// The walkthrough's step, timed wherever steps are watched.
constexpr tutorial::Step pool_granted{"the other GPU granted the whole pool"};

Found walkthrough(std::size_t bytes) {
    Found found;
    const std::size_t count = bytes / sizeof(std::uint32_t);
    // 1. A pool on the owner, and who may use it, as created.
    CUDA_CHECK(cudaSetDevice(owner));
    cudaMemPool_t pool = owner_pool();
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    found.owner_before = access_of(pool, owner);
    found.user_before = access_of(pool, user);
    // 2. A block handed out and filled before the grant; the grant; a block handed out after it.
    std::uint32_t *earlier = nullptr, *later = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&earlier, bytes, pool, stream));
    fill_on_device_async(earlier, count, 57, stream);
    {
        const tutorial::During during(pool_granted);
        grant_user(pool);
    }
    found.user_after = access_of(pool, user);
    CUDA_CHECK(cudaMallocFromPoolAsync(&later, bytes, pool, stream));
    fill_on_device_async(later, count, 57, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    // 3. Kernels on the user GPU read both blocks and write the later one; the owner checks.
    CUDA_CHECK(cudaSetDevice(user));
    found.earlier_wrong = mismatches_on_device(earlier, count, 57);
    found.later_wrong = mismatches_on_device(later, count, 57);
    fill_on_device(later, count, 58);
    CUDA_CHECK(cudaSetDevice(owner));
    found.written_wrong = mismatches_on_device(later, count, 58);
    // 4. The blocks back to the pool, the pool destroyed.
    CUDA_CHECK(cudaFreeAsync(earlier, stream));
    CUDA_CHECK(cudaFreeAsync(later, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    return found;
}

// The mistake the grant avoids: peer access enabled, the user reads the owner's blocks, one from
// cudaMalloc (peer access covers it) and one from cudaMallocAsync, the owner's default pool,
// which peer access does not cover: that read faults.
struct TwoBlocks {
    std::uint32_t *plain = nullptr, *pooled = nullptr;
    std::size_t count = 0;
};

TwoBlocks owner_blocks_peer_access_on(std::size_t bytes) {
    TwoBlocks b;
    b.count = bytes / sizeof(std::uint32_t);
    CUDA_CHECK(cudaSetDevice(owner));
    CUDA_CHECK(cudaMalloc(&b.plain, bytes));
    CUDA_CHECK(cudaMallocAsync(&b.pooled, bytes, nullptr));
    fill_on_device(b.plain, b.count, 57);
    fill_on_device(b.pooled, b.count, 57);
    CUDA_CHECK(cudaSetDevice(user));
    CUDA_CHECK(cudaDeviceEnablePeerAccess(owner, 0));
    return b;
}

// A kernel on the user GPU reads the owner's block: the values not as filled.
std::size_t user_reads(const std::uint32_t* block, std::size_t count) {
    CUDA_CHECK(cudaSetDevice(user));
    return mismatches_on_device(block, count, 57);
}

}  // namespace

#ifndef TUTORIAL_CHECKS
// ./pool_access runs the walkthrough; with any argument it makes the mistake instead.
int main(int argc, char**) {
    int gpus = 0;
    CUDA_CHECK(cudaGetDeviceCount(&gpus));
    if (gpus < 2) {
        std::printf("SKIP: pool_access: a pool for another GPU needs 2 GPUs; this machine has %d\n",
                    gpus);
        return 77;  // as the course says a missing GPU
    }
    if (argc > 1) {
        const TwoBlocks b = owner_blocks_peer_access_on(std::size_t{4} << 20);
        std::printf("cudaMalloc block: %zu wrong\n", user_reads(b.plain, b.count));
        std::printf("cudaMallocAsync block: %zu wrong\n", user_reads(b.pooled, b.count));
        return 0;
    }
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(std::size_t{256} << 20);
    times.print();
    // The card's answer: what GPU 0 may do with GPU 1's pool before and after the one grant.
    const auto name = [](cudaMemAccessFlags flags) {
        return flags == cudaMemAccessFlagsProtNone        ? "ProtNone"
               : flags == cudaMemAccessFlagsProtReadWrite ? "ProtReadWrite"
                                                          : "ProtRead";
    };
    std::printf(
        "GPU %d on GPU %d's pool, by cudaMemPoolGetAccess: %s before cudaMemPoolSetAccess "
        "(%.3f ms), %s after it, for blocks old and new (a read without the grant, peer "
        "access on: ./pool_access mistake)\n",
        user, owner, name(found.user_before), times.median_host_ms(pool_granted),
        name(found.user_after));
    std::printf(
        "GPU %d's access before the grant %d, after %d; wrong in its reads: %zu and %zu, "
        "in what it wrote: %zu\n",
        user, static_cast<int>(found.user_before), static_cast<int>(found.user_after),
        found.earlier_wrong, found.later_wrong, found.written_wrong);
    return 0;
}
#endif
