// Checks of section dmabuf: runs the walkthrough of ../dmabuf.cu (a range of cudaMalloc memory and
// one of cuMemCreate memory, each exported as a dma-buf and looked at), and tries, in child
// processes, the exports the entry does not name.
#include "07_ipc/dmabuf.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/text.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::format;

// Child role: one export the entry does not name: "unaligned" (an address one byte into the
// allocation), "host" (cudaMallocHost memory), "managed" (cudaMallocManaged) or "pool" (a block
// from cudaMallocAsync's default pool).
int child_bad_export(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const auto cuMemGetHandleForAddressRange = DRIVER_FUNCTION(cuMemGetHandleForAddressRange);
    // Each kind of memory a page larger than the range, which starts at its first page boundary,
    // as the lesson's Step 1 does for cudaMalloc: only the kind of memory differs.
    std::size_t bytes = 2 * tutorial::MiB;
    void* memory = nullptr;
    if (args.at(1) == "host") {
        CUDA_CHECK(cudaMallocHost(&memory, bytes + host_page()));
    } else if (args.at(1) == "managed") {
        CUDA_CHECK(cudaMallocManaged(&memory, bytes + host_page()));
    } else if (args.at(1) == "pool") {
        CUDA_CHECK(cudaMallocAsync(&memory, bytes + host_page(), nullptr));
        CUDA_CHECK(cudaStreamSynchronize(nullptr));
    } else {
        memory = device_memory(bytes, &bytes);
    }
    CUdeviceptr start = first_page_boundary(memory);
    if (args.at(1) == "unaligned") {  // one byte past the boundary, and a page shorter
        start += 1;
        bytes -= host_page();
    }
    int fd = -1;
    const CUresult result =
        cuMemGetHandleForAddressRange(&fd, start, bytes, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    std::printf("cuMemGetHandleForAddressRange(%s) -> %s\n", args.at(1).c_str(),
                tutorial::driver_error_name(result));
    return 0;
}

namespace {

// The children's answers, in the order they are asked: "unaligned", "host", "managed", "pool".
std::vector<std::string> try_bad_exports(int device) {
    std::vector<std::string> answers;
    for (const char* which : {"unaligned", "host", "managed", "pool"}) {
        const tutorial::ChildResult child = tutorial::run_child(
            "bad_export", std::vector<std::string>{std::to_string(device), which});
        tutorial::print_child_output(child);
        answers.push_back(tutorial::child_answer(child, "cuMemGetHandleForAddressRange"));
    }
    std::printf("\n");
    return answers;
}

// What the children's exports got: where HOST_ALLOC_DMA_BUF_SUPPORTED is 1 the entry supports
// cuMemAllocHost's and cuMemHostAlloc's memory, and names no runtime allocation: what this
// driver did with cudaMallocHost's, like the rest, is observed.
void claim_refusals(tutorial::Context& ctx, const std::vector<std::string>& answers,
                    int host_supported) {
    if (host_supported == 1) {
        ctx.claim(tutorial::observed(
            "host_memory",
            "cudaMallocHost memory is exported where HOST_ALLOC_DMA_BUF_SUPPORTED = 1",
            answers[1].find("CUDA_SUCCESS") != std::string::npos, answers[1],
            "the cuMemGetHandleForAddressRange entry supports ranges from cuMemAllocHost and "
            "cuMemHostAlloc where that attribute is 1; no entry says cudaMallocHost's memory is "
            "theirs"));
    } else {
        ctx.claim(tutorial::observed(
            "host_memory",
            "cudaMallocHost memory is refused where HOST_ALLOC_DMA_BUF_SUPPORTED = 0",
            answers[1].find("CUDA_SUCCESS") == std::string::npos, answers[1],
            "the entry supports host allocations only where that attribute is 1, and names no "
            "error otherwise"));
    }
    ctx.claim(tutorial::observed(
        "managed_refused", "managed memory is refused",
        answers[2].find("CUDA_ERROR_INVALID_VALUE") != std::string::npos, answers[2],
        "the entry names cuMemAlloc and cuMemAddressReserve ranges, and says nothing of managed "
        "memory"));
    ctx.claim(tutorial::observed(
        "pool_block_exported", "a block of cudaMallocAsync's default pool is exported",
        answers[3].find("CUDA_SUCCESS") != std::string::npos, answers[3],
        "the entry names cuMemAlloc and cuMemAddressReserve ranges, and says nothing of pool "
        "memory"));
}

}  // namespace

tutorial::Result run_dmabuf(tutorial::Context& ctx) {
    if (tutorial::driver_attribute(ctx.device, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) != 1) {
        return ctx.skip("CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0: no dma-buf export here");
    }
    const Found f = walkthrough(ctx.device, ctx.quick() ? (2 << 20) : (64 << 20));
    const Export& m = f.malloced;
    const Export& v = f.vmm;
    if (m.result == CUDA_SUCCESS) {
        std::printf(
            "cudaMalloc'd %s and a page, and exported the page-aligned %s inside: descriptor %d,\n"
            "which /proc/self/fd calls \"%s\"; lseek(fd, 0, SEEK_END) says %lld bytes.\n",
            tutorial::format_bytes(m.bytes).c_str(), tutorial::format_bytes(m.bytes).c_str(), m.fd,
            m.seen.name.c_str(), m.seen.size);
    } else {
        std::printf(
            "cudaMalloc'd %s and a page; the export of the page-aligned %s inside\n"
            "returned %s.\n",
            tutorial::format_bytes(m.bytes).c_str(), tutorial::format_bytes(m.bytes).c_str(),
            tutorial::driver_error_name(m.result));
    }
    std::printf("cuMemCreate'd and mapped %s exported: descriptor %d, \"%s\", %lld bytes.\n\n",
                tutorial::format_bytes(v.bytes).c_str(), v.fd, v.seen.name.c_str(), v.seen.size);
    const int host_supported =
        tutorial::driver_attribute(ctx.device, CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED);
    const std::vector<std::string> answers = try_bad_exports(ctx.device);
    const std::string what = m.result == CUDA_SUCCESS ? m.seen.name : "(none: not exported)";
    // Where CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 1 (checked above) the entry supports a range
    // of cuMemAlloc memory and a cuMemAddressReserve range that cuMemMap has mapped whole. It
    // names no runtime allocation, so what this driver did with cudaMalloc's is observed: the
    // lesson keeps its result rather than stopping on it.
    ctx.claim(tutorial::observed(
        "cudamalloc_exported",
        "cuMemGetHandleForAddressRange gives a dma-buf descriptor for cudaMalloc memory",
        m.result == CUDA_SUCCESS && m.fd >= 0,
        m.result == CUDA_SUCCESS ? format("descriptor %d", m.fd)
                                 : std::string(tutorial::driver_error_name(m.result)),
        "the cuMemGetHandleForAddressRange entry supports ranges from cuMemAlloc (and mapped "
        "cuMemAddressReserve ranges); no entry says cudaMalloc's memory is cuMemAlloc's"));
    ctx.claim(tutorial::documented(
        "vmm_exported", "...and for cuMemCreate memory mapped over its whole range", v.fd >= 0,
        format("descriptor %d", v.fd), "the range was not fully mapped",
        tutorial::Entry{"Driver API reference: cuMemGetHandleForAddressRange",
                        "cuMemAddressReserve CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED",
                        "is supported"}));
    ctx.claim(tutorial::observed(
        "dmabuf_of_range_size", "each descriptor is a dma-buf of exactly its range's size",
        what.find("dmabuf") != std::string::npos &&
            v.seen.name.find("dmabuf") != std::string::npos &&
            m.seen.size == static_cast<long long>(m.bytes) &&
            v.seen.size == static_cast<long long>(v.bytes),
        format("\"%s\", %lld bytes; cuMemCreate's: %lld of %zu bytes", what.c_str(), m.seen.size,
               v.seen.size, v.bytes),
        "the CUDA reference says only that a dma_buf descriptor is returned; what Linux shows "
        "of it is the kernel's"));
    ctx.claim(tutorial::observed(
        "unaligned_refused", "a range not aligned to the host page size is refused",
        answers[0].find("CUDA_ERROR_INVALID_VALUE") != std::string::npos, answers[0],
        "the entry states the alignment as a precondition and names no error for it"));
    claim_refusals(ctx, answers, host_supported);
    // The verdict rests on the documented export; the cudaMalloc one is observed above.
    return ctx.verdict(
        v.fd >= 0,
        format("a dma-buf descriptor for %s of cuMemCreate memory (%s of cudaMalloc "
               "memory: %s)",
               tutorial::format_bytes(v.bytes).c_str(), tutorial::format_bytes(m.bytes).c_str(),
               m.result == CUDA_SUCCESS ? "exported" : tutorial::driver_error_name(m.result)));
}

TUTORIAL_SECTION(dmabuf, run_dmabuf);
TUTORIAL_CHILD(bad_export, child_bad_export);
