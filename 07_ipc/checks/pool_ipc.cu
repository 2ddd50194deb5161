// Checks of section pool_ipc: runs the walkthrough of ../pool_ipc.cu, whose importer is this
// program in the child role `pool_importer` (the lesson's pool_importer()): four blocks of an
// exportable pool, shared with the importer, checked and changed in place, freed by the importer
// before the master frees them. A second worker shows what breaking that order does (outside the
// documented order, so what it shows is this driver's), with the lesson's own calls.
#include "07_ipc/pool_ipc.cu"

#include "../helpers/ipc_common.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdint>
#include <cstdio>

using tutorial::format;

// Child role `pool_importer` (args: device): the lesson's importer.
int child_pool_importer(const std::vector<std::string>& args) {
    return pool_importer(std::atoi(args.at(0).c_str()));
}

namespace {

constexpr std::uint32_t reused_seed = 89;  // the exporter's next block, in the wrong order

// What the late importer saw: block A when it imported it, importing block B after the exporter
// freed it, block A again after the exporter freed it and handed its memory out again, and its
// own cudaFree of A after that.
struct Late {
    std::size_t a_wrong = 0;
    cudaError_t imported_b = cudaSuccess;
    std::size_t still_a = 0, now_new = 0;
    cudaError_t freed_a = cudaSuccess;
};

}  // namespace

// Child role `pool_late_importer` (args: device): imports block A and reads it, says so, and waits
// for the master, which frees A (still imported) and B (not yet imported) and hands A's memory out
// again; then imports B, reads A again, frees A, and answers a Late.
int child_pool_late_importer(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    std::size_t count = 0;
    cudaMemPoolPtrExportData a_data{}, b_data{};
    if (!read_all(STDIN_FILENO, &count, sizeof count)) return 4;
    const int fd = receive_descriptor(STDIN_FILENO);
    if (fd < 0 || !read_all(STDIN_FILENO, &a_data, sizeof a_data) ||
        !read_all(STDIN_FILENO, &b_data, sizeof b_data)) {
        return 4;
    }
    const cudaMemPool_t pool = import_pool_from(fd);
    grant_access(pool, device);
    auto* a = static_cast<std::uint32_t*>(import_block(pool, a_data));
    Late late;
    late.a_wrong = mismatches_on_device(a, count, first_seed);
    char go = 'A';
    if (!send_all(STDOUT_FILENO, &go, 1) || !read_all(STDIN_FILENO, &go, 1)) return 4;
    void* b = nullptr;
    late.imported_b = cudaMemPoolImportPointer(&b, pool, &b_data);
    (void)cudaGetLastError();
    late.still_a = count - mismatches_on_device(a, count, first_seed);
    late.now_new = count - mismatches_on_device(a, count, reused_seed);
    late.freed_a = cudaFree(a);
    (void)cudaGetLastError();
    if (late.imported_b == cudaSuccess) (void)cudaFree(b);
    (void)cudaMemPoolDestroy(pool);
    return send_all(STDOUT_FILENO, &late, sizeof late) ? 0 : 4;
}

namespace {

// The rule broken, with a pool that keeps freed memory (threshold UINT64_MAX), so that the freed
// block A is the one the master's next allocation gets.
Late break_the_rule(int device, std::size_t bytes, bool& reused, bool& answered) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const cudaMemPool_t pool = exportable_pool(device);
    std::uint64_t keep_all = UINT64_MAX;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::uint32_t *a = nullptr, *b = nullptr, *next = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&a, bytes, pool, stream));
    CUDA_CHECK(cudaMallocFromPoolAsync(&b, bytes, pool, stream));
    fill_on_device_async(a, count, first_seed, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const Worker worker = start_worker(
        {"/proc/self/exe", tutorial::child_flag, "pool_late_importer", std::to_string(device)});
    const int fd = export_pool(pool);
    const cudaMemPoolPtrExportData a_data = export_block(a), b_data = export_block(b);
    char go = 0;
    Late late;
    if (send_all(worker.socket, &count, sizeof count) && send_descriptor(worker.socket, fd) &&
        send_all(worker.socket, &a_data, sizeof a_data) &&
        send_all(worker.socket, &b_data, sizeof b_data) && read_all(worker.socket, &go, 1)) {
        CUDA_CHECK(cudaFreeAsync(a, stream));  // wrong: the worker still holds A
        CUDA_CHECK(cudaFreeAsync(b, stream));  // wrong: the worker has not imported B yet
        CUDA_CHECK(cudaMallocFromPoolAsync(&next, bytes, pool, stream));
        fill_on_device_async(next, count, reused_seed, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        reused = next == a;
        answered = send_all(worker.socket, &go, 1) && read_all(worker.socket, &late, sizeof late);
    }
    close(fd);
    wait_for(worker);
    if (next != nullptr) CUDA_CHECK(cudaFreeAsync(next, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaMemPoolDestroy(pool));
    return late;
}

}  // namespace

tutorial::Result run_pool_ipc(tutorial::Context& ctx) {
    int handle_types = 0;
    if (tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported) == 1) {
        handle_types =
            tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolSupportedHandleTypes);
    }
    if ((handle_types & cudaMemHandleTypePosixFileDescriptor) == 0) {
        return ctx.skip("this device's pools cannot be exported as file descriptors");
    }
    const std::size_t bytes = ctx.quick() ? (4 << 20) : (64 << 20);
    const std::size_t values = bytes / 4 * shared_blocks;
    std::printf(
        "The master creates a pool with handleTypes = cudaMemHandleTypePosixFileDescriptor,\n"
        "hands out %d blocks of %s from it and fills them. cudaMemPoolExportToShareableHandle\n"
        "gives the pool's descriptor, sent over a Unix socket; cudaMemPoolExportPointer gives\n"
        "each block's 64 bytes of export data, sent as plain bytes on the same socket.\n\n",
        shared_blocks, tutorial::format_bytes(bytes).c_str());
    const Found f = walkthrough(bytes, ctx.device, {"/proc/self/exe", tutorial::child_flag});
    const tutorial::ChildResult worker = child_result(f.status);
    const Imported& i = f.imported;
    if (f.answered) {
        std::printf(
            "The worker: pool imported (access for its GPU before any grant: %s); %d blocks\n"
            "imported, %zu of %zu values wrong, all replaced by 2 * x + 1, its imports freed.\n"
            "cudaMemPoolImportFromShareableHandle took %.3f ms; cudaMemPoolImportPointer %.3f ms\n"
            "for the first block, %.3f ms median of %d. Each block costs about what opening a\n"
            "legacy IPC handle does (section `bench`); the pool's descriptor is passed only "
            "once.\n",
            i.access_before == cudaMemAccessFlagsProtReadWrite ? "ReadWrite" : "none",
            shared_blocks, i.wrong, values, i.pool_ms, i.first_block_ms, i.median_block_ms,
            shared_blocks);
    }
    std::printf(
        "The worker %s. The master then found %zu of %zu values not 2 * x + 1, and freed "
        "its blocks.\n\n",
        worker.describe().c_str(), f.wrong, values);
    std::printf("The rule broken, with a second worker and a pool that keeps freed memory:\n");
    bool reused = false, answered = false;
    const Late late = break_the_rule(ctx.device, bytes, reused, answered);
    const std::size_t count = bytes / 4;
    std::printf(
        "the master freed A and B and was handed %s again\n"
        "%-54s -> %zu of %zu values wrong\n%-54s -> %s\n%-54s -> %zu of %zu values still A's, "
        "%zu the new block's\n%-54s -> %s\n\n",
        reused ? "A's address" : "another address", "block A imported and read", late.a_wrong,
        count, "cudaMemPoolImportPointer(B), freed by the exporter",
        cudaGetErrorName(late.imported_b), "block A read again, freed by the exporter",
        late.still_a, count, late.now_new, "cudaFree(A) in the importer, after the exporter",
        cudaGetErrorName(late.freed_a));
    const bool shared = f.answered && worker.succeeded() && i.wrong == 0 && f.wrong == 0;
    ctx.claim(tutorial::documented(
        "blocks_used_in_place",
        "a worker that imported the pool uses its blocks in place, from 64 bytes of export data "
        "each",
        shared,
        format("the worker %s; %zu of %zu values not as it left them", worker.describe().c_str(),
               f.wrong, values),
        "the import was refused or the worker's kernels did not reach the master's blocks",
        tutorial::Entry{"Runtime API reference: cudaMemPoolExportToShareableHandle",
                        "cudaMemPoolExportPointer cudaMemPoolImportPointer", "can"}));
    // Outside the documented order (the cudaMemPoolImportPointer entry: every importer frees
    // first): what happened is this driver's, reported and never judged.
    ctx.claim(tutorial::observed(
        "freed_block_still_imports",
        "out of order, a block the exporter freed still imports, and the old pointer shows the "
        "next owner's data",
        answered && late.imported_b == cudaSuccess && late.still_a == 0,
        answered ? format("block B imported with %s; at block A's old pointer %zu of %zu values "
                          "still A's, %zu the new block's",
                          cudaGetErrorName(late.imported_b), late.still_a, count, late.now_new)
                 : "the second worker did not answer",
        "the cudaMemPoolImportPointer entry asks importers to free their blocks before the "
        "exporter does, and says nothing of what breaking that order does"));
    return ctx.verdict(shared,
                       "the worker imported the pool and its blocks, changed them in place and "
                       "freed its imports before the master freed the blocks");
}

TUTORIAL_SECTION(pool_ipc, run_pool_ipc);
TUTORIAL_CHILD(pool_importer, child_pool_importer);
TUTORIAL_CHILD(pool_late_importer, child_pool_late_importer);
