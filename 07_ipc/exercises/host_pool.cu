// Exercise ex07_host_pool (chapter 07_ipc): pinned host memory a worker process uses in place.
//
// The owner wants a worker process to change its pinned host memory in place, with no copy.
// cudaHostAlloc memory cannot be handed over (no CUDA IPC call takes it), but a block of a pool
// of pinned host memory can, like a block of a device pool (section `pool_ipc`): the pool
// crosses as a file descriptor, the block as its export data (section `host_shared`). Two things
// stand in the way below: the owner's pool is refused its handle type, and the worker's GPU may
// not use the block it imported. Fix both functions.
//
// The check (exercises/check/host_pool.cu) creates the pool with create_shareable_host_pool(),
// allocates a block of 16 MiB from it and fills it on the CPU, exports the pool and the block,
// and starts a worker process, which imports them, calls let_this_gpu_use() and doubles every
// value with a kernel. It passes when
//   - the pool is created, of host memory, and exports as a descriptor with its block,
//   - every value of the owner's block is then twice what it was.
// Run it: cmake --build build --target ex07_host_pool && ./build/bin/ex07_host_pool
//    or:  ctest --preset exercise -R 07_ipc
#include "common/check.hpp"

#include <cuda_runtime.h>

// In the owner: a pool of pinned host memory that another process may import. Returns what
// cudaMemPoolCreate said.
cudaError_t create_shareable_host_pool(int device, cudaMemPool_t* pool) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;  // exported as a file descriptor
    // TODO 1: the cudaMemPoolCreate entry refuses any handle type for a pool at
    //         cudaMemLocationTypeHost. Ask which host NUMA node is nearest the GPU
    //         (cudaDeviceGetAttribute with cudaDevAttrHostNumaId and `device`), and put the pool
    //         there: location {cudaMemLocationTypeHostNuma, that node}.
    props.location.type = cudaMemLocationTypeHost;
    props.location.id = 0;
    (void)device;
    return cudaMemPoolCreate(pool, &props);
}

// In the worker, once it has imported the pool: what this process's GPU needs before a kernel
// may use the pool's blocks.
void let_this_gpu_use(cudaMemPool_t imported, int device) {
    // TODO 2: a pool of host memory is the CPU's by default. Give `device` read-write access:
    //         cudaMemPoolSetAccess with one cudaMemAccessDesc, location
    //         {cudaMemLocationTypeDevice, device}, flags cudaMemAccessFlagsProtReadWrite.
    (void)imported;
    (void)device;
}
