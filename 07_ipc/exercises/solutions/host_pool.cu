// Exercise ex07_host_pool (chapter 07_ipc), the course's solution: the pool on the host NUMA node
// nearest the GPU (a pool at cudaMemLocationTypeHost may have no handle type), and the worker's
// GPU granted access to the pool it imported. The task is in ../host_pool.cu.
#include "common/check.hpp"

#include <cuda_runtime.h>

cudaError_t create_shareable_host_pool(int device, cudaMemPool_t* pool) {
    int numa_id = -1;
    CUDA_CHECK(cudaDeviceGetAttribute(&numa_id, cudaDevAttrHostNumaId, device));
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    props.location.type = cudaMemLocationTypeHostNuma;
    props.location.id = numa_id;
    return cudaMemPoolCreate(pool, &props);
}

void let_this_gpu_use(cudaMemPool_t imported, int device) {
    const cudaMemAccessDesc grant{{cudaMemLocationTypeDevice, device},
                                  cudaMemAccessFlagsProtReadWrite};
    CUDA_CHECK(cudaMemPoolSetAccess(imported, &grant, 1));
}
