// Section pool_ipc: a pool shared once, as a file descriptor; its blocks by their export data.
// Built alone, from the course's folder (mkdir -p build first), then ./build/pool_ipc:
//   nvcc -std=c++17 -I. 07_ipc/pool_ipc.cu common/standalone.cu -o build/pool_ipc
//   (or in 07_ipc/: nvcc -std=c++17 -I.. pool_ipc.cu ../common/standalone.cu -o ../build/pool_ipc)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/process.hpp"
#include "common/timing.hpp"
#include <unistd.h>
#include <cstdint>
#include <cstdlib>
#include <vector>
namespace {

// Stream-ordered allocations shared between processes: the pool is created exportable and
// shared once; each block then travels as 64 bytes of export data. Importers free their blocks
// before the exporter does.

// Workers: this program started again, a Unix socket as stdin and stdout; descriptors cross it
// by SCM_RIGHTS, as in section vmm_fd (common/process.hpp).
using tutorial::Worker, tutorial::read_all, tutorial::receive_descriptor, tutorial::send_all,
    tutorial::send_descriptor, tutorial::start_worker, tutorial::wait_for;

constexpr std::uint32_t first_seed = 81;  // block i holds pattern(., first_seed + i)
constexpr int shared_blocks = 4;

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

// Step 2. The exporter shares the pool once, as a file descriptor; then each block, as opaque
// bytes that may travel any way at all.
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

// Step 3. The importer: the pool from the descriptor; its GPU given access if it has none (an
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
    cudaMemLocation here{cudaMemLocationTypeDevice, device};
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

__global__ void two_x_plus_one(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = 2 * data[i] + 1;
    }
}

// What the importer answers: the values of the blocks that were not the exporter's, its GPU's
// access to the pool before any grant, and what its imports took (host clock).
struct Imported {
    std::size_t wrong;
    cudaMemAccessFlags access_before;
    double pool_ms, first_block_ms, median_block_ms;
};

// The importer process: the block size, the pool's descriptor, then each block's export data.
// It checks each block and changes it in place (2 * x + 1); then, the lifetime rule, it frees
// every imported block (and lets go of the pool) before it answers, and only then may the
// exporter free them.
int pool_importer(int device) {
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaFree(nullptr));  // the context first: it is no part of any import
    std::size_t count = 0;
    if (!read_all(STDIN_FILENO, &count, sizeof count)) return 4;
    const int fd = receive_descriptor(STDIN_FILENO);
    if (fd < 0) return 4;
    Imported answer{};
    tutorial::HostTimer timer;
    const cudaMemPool_t pool = import_pool_from(fd);
    answer.pool_ms = timer.elapsed_ms();
    answer.access_before = grant_access(pool, device);
    std::vector<std::uint32_t*> blocks;
    std::vector<double> block_ms;
    for (int i = 0; i < shared_blocks; ++i) {
        cudaMemPoolPtrExportData data{};
        if (!read_all(STDIN_FILENO, &data, sizeof data)) return 4;
        timer.restart();
        blocks.push_back(static_cast<std::uint32_t*>(import_block(pool, data)));
        block_ms.push_back(timer.elapsed_ms());
        answer.wrong += mismatches_on_device(blocks.back(), count, first_seed + i);
        two_x_plus_one<<<512, 256>>>(blocks.back(), count);
        CUDA_CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    for (std::uint32_t* block : blocks) CUDA_CHECK(cudaFree(block));
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    answer.first_block_ms = block_ms.front();
    answer.median_block_ms = tutorial::median(block_ms);
    return send_all(STDOUT_FILENO, &answer, sizeof answer) ? 0 : 4;
}

// What the exporter found: the importer's answer (answered: it came, after the importer had freed
// its blocks), how the importer ended (waitpid's status), and the values of its blocks that are
// not 2 * x + 1 afterwards.
struct Found {
    bool answered = false;
    Imported imported{};
    int status = 0;
    std::size_t wrong = 0;
};

// `self` runs this program again, in the role named after it ("pool_importer" and the device).
Found walkthrough(std::size_t bytes, int device, const std::vector<std::string>& self) {
    Found found;
    const std::size_t count = bytes / sizeof(std::uint32_t);
    // 1. The exporter's pool, and its blocks from it, in stream order, each filled.
    const cudaMemPool_t pool = exportable_pool(device);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::vector<std::uint32_t*> blocks(shared_blocks);
    for (int i = 0; i < shared_blocks; ++i) {
        CUDA_CHECK(cudaMallocFromPoolAsync(&blocks[i], bytes, pool, stream));
        fill_on_device_async(blocks[i], count, first_seed + i, stream);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));  // an importer may use a block once it exists
    // 2. The importer: this program again. It gets the size, the pool's descriptor (its own copy;
    //    the exporter's is not needed after that) and each block's export data.
    std::vector<std::string> command = self;
    command.insert(command.end(), {"pool_importer", std::to_string(device)});
    const Worker importer = start_worker(command);
    const int fd = export_pool(pool);
    bool sent =
        send_all(importer.socket, &count, sizeof count) && send_descriptor(importer.socket, fd);
    close(fd);
    for (std::uint32_t* block : blocks) {
        const cudaMemPoolPtrExportData data = export_block(block);
        sent = sent && send_all(importer.socket, &data, sizeof data);
    }
    // 3. The importer checks and changes the blocks in place, frees its imports, and answers.
    found.answered = sent && read_all(importer.socket, &found.imported, sizeof(Imported));
    found.status = wait_for(importer);
    // 4. The change shows in the exporter's blocks; it frees them only now.
    for (int i = 0; i < shared_blocks; ++i) {
        found.wrong += mismatches_on_device(blocks[i], count, first_seed + i, {2, 1});
    }
    for (std::uint32_t* block : blocks) CUDA_CHECK(cudaFreeAsync(block, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
// Alone, this program exports 4 blocks of 4 MiB; the importer is the same program, started as
// `<program> pool_importer <device>`.
int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "pool_importer") {
        return pool_importer(std::atoi(argv[2]));
    }
    const Found found = walkthrough(std::size_t{4} << 20, 0, {"/proc/self/exe"});
    std::printf(
        "the importer %s: %zu values wrong there, the pool imported in %.3f ms, a block "
        "in %.3f ms; back in the exporter, %zu values are not 2 * x + 1\n",
        found.answered ? "answered" : "did not answer", found.imported.wrong,
        found.imported.pool_ms, found.imported.median_block_ms, found.wrong);
    return found.answered && found.imported.wrong == 0 && found.wrong == 0 ? 0 : 1;
}
#endif
