// Section pool_ipc: stream-ordered allocations shared between processes. The pool is created
// exportable and shared once, as a file descriptor; each block then travels as 64 bytes of export
// data. Importers free their blocks before the exporter does.
#include "common/check.hpp"

#include <unistd.h>

#include <cstdint>
#include <vector>

namespace {

// Step 1. A pool whose blocks other processes may use: it must say so when it is created.
cudaMemPool_t exportable_pool(int device) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;  // what makes it exportable
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    return pool;
}

// Step 2. The exporter allocates its blocks from it, in stream order.
std::vector<std::uint32_t*> allocate_blocks(cudaMemPool_t pool, std::size_t bytes, int blocks,
                                            cudaStream_t stream) {
    std::vector<std::uint32_t*> allocated(blocks);
    for (std::uint32_t*& block : allocated) {
        CUDA_CHECK(cudaMallocFromPoolAsync(&block, bytes, pool, stream));
    }
    return allocated;
}

// Step 3. The exporter shares the pool once, as a file descriptor (sent over a Unix socket,
// helpers/channel.cpp); then each block, as opaque bytes that may travel any way at all.
int export_pool(cudaMemPool_t pool) {
    int fd = -1;
    CUDA_CHECK(
        cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
    return fd;
}

cudaMemPoolPtrExportData export_block(void* block) {
    cudaMemPoolPtrExportData data{};
    CUDA_CHECK(cudaMemPoolExportPointer(&data, block));
    return data;
}

// Step 4. The importer: the pool from the descriptor; its GPU given access if it has none (an
// importer on another GPU needs it); then each block from its bytes.
cudaMemPool_t import_pool_from(int fd) {
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolImportFromShareableHandle(
        &pool, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
        cudaMemHandleTypePosixFileDescriptor, 0));
    close(fd);  // the imported pool keeps what it needs
    return pool;
}

cudaMemAccessFlags grant_access(cudaMemPool_t pool, int device) {  // returns the access before
    cudaMemLocation here{};
    here.type = cudaMemLocationTypeDevice;
    here.id = device;
    cudaMemAccessFlags before = cudaMemAccessFlagsProtNone;
    CUDA_CHECK(cudaMemPoolGetAccess(&before, pool, &here));
    if (before != cudaMemAccessFlagsProtReadWrite) {
        const cudaMemAccessDesc grant{here, cudaMemAccessFlagsProtReadWrite};
        CUDA_CHECK(cudaMemPoolSetAccess(pool, &grant, 1));
    }
    return before;
}

void* import_block(cudaMemPool_t pool, cudaMemPoolPtrExportData& data) {
    void* block = nullptr;
    CUDA_CHECK(cudaMemPoolImportPointer(&block, pool, &data));
    return block;
}

// Step 5. The lifetime rule: every importer frees its imported blocks (and then may let go of the
// pool), and says so; only then does the exporter free them.
void free_imports(const std::vector<std::uint32_t*>& blocks, cudaMemPool_t pool) {
    for (std::uint32_t* block : blocks) CUDA_CHECK(cudaFree(block));
    CUDA_CHECK(cudaMemPoolDestroy(pool));
}

void free_blocks(const std::vector<std::uint32_t*>& blocks, cudaStream_t stream) {
    for (std::uint32_t* block : blocks) CUDA_CHECK(cudaFreeAsync(block, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace
