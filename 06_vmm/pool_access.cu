// Section pool_access (2 or more GPUs): which GPUs may use a pool's memory. A pool's blocks are
// its own GPU's only, peer access or not, until cudaMemPoolSetAccess grants another GPU the whole
// pool. (checks/pool_access.cu uses blocks from before and after the grant, and faults in a child.)
#include "common/check.hpp"

namespace {

constexpr int user = 0;   // the GPU that is given access
constexpr int owner = 1;  // the GPU whose pool it is

// Step 1. A pool on GPU `owner`; its blocks are the owner's alone until access is granted.
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

// Step 2. One call grants GPU `user` read-write access to every block of the pool, handed out
// before the call or after it.
void grant_user(cudaMemPool_t pool) {
    cudaMemAccessDesc grant{};
    grant.location.type = cudaMemLocationTypeDevice;
    grant.location.id = user;
    grant.flags = cudaMemAccessFlagsProtReadWrite;
    CUDA_CHECK(cudaMemPoolSetAccess(pool, &grant, 1));
}

// Step 3. What `device` may do with the pool's blocks now.
cudaMemAccessFlags access_of(cudaMemPool_t pool, int device) {
    cudaMemLocation where{};
    where.type = cudaMemLocationTypeDevice;
    where.id = device;
    cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
    CUDA_CHECK(cudaMemPoolGetAccess(&flags, pool, &where));
    return flags;
}

}  // namespace
