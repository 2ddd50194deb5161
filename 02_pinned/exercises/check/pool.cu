// The course's check of exercise ex02_pool (the task is in ../pool.cu): the learner's pool must
// hand out pinned host memory the device may use, and keep it when it is freed. Each step runs
// only once the one before it held: no kernel touches memory the device has no access to.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

// Written by the learner (exercises/pool.cu).
cudaMemPool_t create_pinned_pool();
void give_device_access(cudaMemPool_t pool, int device);
void* allocate_pinned(cudaMemPool_t pool, std::size_t bytes, cudaStream_t stream);
void free_pinned(void* memory, cudaStream_t stream);

namespace {

using tutorial::Context;
using tutorial::format;
using tutorial::format_bytes;
using tutorial::MiB;
using tutorial::Result;

constexpr std::uint32_t kernel_values = 23;  // the kernel writes pattern(i, 23)

// What cudaMemPoolGetAccess says `device` may do with the pool's memory.
std::string access_of(cudaMemPool_t pool, int device) {
    cudaMemLocation location{};
    location.type = cudaMemLocationTypeDevice;
    location.id = device;
    cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
    const cudaError_t result = cudaMemPoolGetAccess(&flags, pool, &location);
    if (result != cudaSuccess) return std::string("refused: ") + cudaGetErrorName(result);
    switch (flags) {
        case cudaMemAccessFlagsProtNone: return "cudaMemAccessFlagsProtNone";
        case cudaMemAccessFlagsProtRead: return "cudaMemAccessFlagsProtRead";
        case cudaMemAccessFlagsProtReadWrite: return "cudaMemAccessFlagsProtReadWrite";
    }
    return format("flags %d", static_cast<int>(flags));
}

std::uint64_t pool_attribute(cudaMemPool_t pool, cudaMemPoolAttr attribute) {
    std::uint64_t value = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, attribute, &value));
    return value;
}

// What each step showed. A step runs only where the one before it held.
struct Seen {
    std::size_t bytes = 0;
    bool pool = false;   // create_pinned_pool returned a pool
    std::string access;  // cudaMemPoolGetAccess for the device, after give_device_access
    bool accessible = false;
    bool allocated = false;  // allocate_pinned ran
    cudaMemoryType type = cudaMemoryTypeUnregistered;
    std::uint64_t used = 0;  // the pool's memory in use while the allocation lives
    bool written = false;    // a kernel wrote the memory and the CPU read it
    std::size_t wrong = 0;
    std::uint64_t used_after_free = 0;  // after free_pinned and a synchronize
    std::uint64_t reserved = 0;         // ...what the pool still holds
    std::uint64_t threshold = 0;        // its release threshold
};

void use_the_memory(cudaMemPool_t pool, cudaStream_t stream, Seen& s) {
    const std::size_t count = s.bytes / sizeof(std::uint32_t);
    auto* data = static_cast<std::uint32_t*>(allocate_pinned(pool, s.bytes, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));  // the CPU may use it once the stream is there
    s.allocated = true;
    s.type = data != nullptr ? tutorial::memory_type(data) : cudaMemoryTypeUnregistered;
    s.used = pool_attribute(pool, cudaMemPoolAttrUsedMemCurrent);
    if (s.type == cudaMemoryTypeHost && s.used >= s.bytes) {
        fill_on_device(data, count, kernel_values);                // a kernel writes it...
        s.wrong = mismatches_on_host(data, count, kernel_values);  // ...and the CPU reads it
        s.written = true;
    }
    if (data != nullptr) free_pinned(data, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));  // where a pool over its threshold gives back
    s.used_after_free = pool_attribute(pool, cudaMemPoolAttrUsedMemCurrent);
    s.reserved = pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent);
    s.threshold = pool_attribute(pool, cudaMemPoolAttrReleaseThreshold);
}

Seen try_the_pool(int device, std::size_t bytes) {
    Seen s;
    s.bytes = bytes;
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaMemPool_t pool = create_pinned_pool();
    s.pool = pool != nullptr;
    if (s.pool) {
        give_device_access(pool, device);
        s.access = access_of(pool, device);
        s.accessible = s.access == "cudaMemAccessFlagsProtReadWrite";
        // Without access a kernel touching the pool's memory would fault: nothing more then.
        if (s.accessible) use_the_memory(pool, stream, s);
        CUDA_CHECK(cudaMemPoolDestroy(pool));
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    return s;
}

void print(const Seen& s) {
    std::printf("create_pinned_pool:  %s\n", s.pool ? "a pool" : "nullptr");
    if (!s.pool) return;
    std::printf("give_device_access:  cudaMemPoolGetAccess for the device says %s\n",
                s.access.c_str());
    if (!s.allocated) return;
    std::printf("allocate_pinned:     %s, %s of the pool in use\n",
                tutorial::memory_type_name(s.type).c_str(), format_bytes(s.used).c_str());
    if (s.written) {
        std::printf("a kernel wrote it:   the CPU read %zu of %zu values wrong\n", s.wrong,
                    s.bytes / sizeof(std::uint32_t));
    }
    std::printf("free_pinned, synchronize: %s in use, %s reserved (release threshold %s)\n",
                format_bytes(s.used_after_free).c_str(), format_bytes(s.reserved).c_str(),
                s.threshold == UINT64_MAX ? "UINT64_MAX" : format_bytes(s.threshold).c_str());
}

// The allocation and what followed it, once the device may access the pool.
bool report_memory(Context& ctx, const Seen& s) {
    const tutorial::Entry pool_attribute_entry{"Runtime API reference: cudaMemPoolGetAttribute",
                                               "cudaMemPoolAttrUsedMemCurrent", "is"};
    const bool host = ctx.claim(tutorial::documented(
        "host_memory", "allocate_pinned returns pinned host memory", s.type == cudaMemoryTypeHost,
        std::string("cudaPointerGetAttributes says ") + tutorial::memory_type_name(s.type).c_str(),
        "the pool's memory is not the host's. First step: in create_pinned_pool, "
        "props.location.type = cudaMemLocationTypeHost and props.allocType = "
        "cudaMemAllocationTypePinned",
        tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes", "cudaMemoryTypeHost",
                        "can"}));
    const bool from_pool = ctx.claim(tutorial::documented(
        "from_pool", "the memory comes from the pool", s.used >= s.bytes,
        format_bytes(s.used) + " of the pool in use for " + format_bytes(s.bytes),
        "it was allocated elsewhere. First step: in allocate_pinned, "
        "cudaMallocFromPoolAsync(&memory, bytes, pool, stream) in place of cudaMallocHost",
        pool_attribute_entry));
    if (!host || !from_pool) return false;
    // cudaMemPoolSetAccess gives the device the access its descriptor names: with
    // cudaMemAccessFlagsProtReadWrite the kernel may write the pool's memory.
    const bool values = ctx.claim(tutorial::documented(
        "kernel_values", "a kernel writes the memory and the CPU reads the kernel's values",
        s.wrong == 0, format("%zu of %zu values wrong", s.wrong, s.bytes / sizeof(std::uint32_t)),
        "the kernel's writes did not reach the pool's memory. First step: in "
        "give_device_access, cudaMemPoolSetAccess with access.flags = "
        "cudaMemAccessFlagsProtReadWrite for the device",
        tutorial::Entry{"Runtime API reference: cudaMemPoolSetAccess", "descriptor gpu",
                        "instructs"}));
    const bool freed = ctx.claim(tutorial::documented(
        "freed_to_pool", "free_pinned gives the memory back to the pool",
        s.used_after_free < s.bytes, format_bytes(s.used_after_free) + " of the pool still in use",
        "the allocation is still live. First step: in free_pinned, cudaFreeAsync(memory, stream)",
        pool_attribute_entry));
    const bool kept = ctx.claim(tutorial::documented(
        "pool_keeps", "the pool keeps the freed memory through a synchronize",
        s.reserved >= s.bytes,
        format_bytes(s.reserved) + " reserved after the free and a synchronize",
        "the pool gave it back at the synchronize. First step: in create_pinned_pool, "
        "cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) with keep = "
        "UINT64_MAX",
        tutorial::Entry{"Programming Guide, Stream Ordered Memory Allocator: Physical Page "
                        "Caching Behavior",
                        "cudaMemPoolAttrReleaseThreshold UINT64_MAX", "will"}));
    return values && freed && kept;
}

Result check(Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrHostMemoryPoolsSupported) != 1) {
        return ctx.skip("hostMemoryPoolsSupported = 0: this device has no pools of host memory");
    }
    const Seen s = try_the_pool(ctx.device, 64 * MiB);
    print(s);
    if (!ctx.claim(tutorial::documented(
            "pool_created", "create_pinned_pool returns a pool", s.pool,
            s.pool ? "it does" : "it returned nullptr",
            "no pool was made. First step: in create_pinned_pool, cudaMemPoolCreate with "
            "props.location.type = cudaMemLocationTypeHost, props.allocType = "
            "cudaMemAllocationTypePinned and props.handleTypes = cudaMemHandleTypeNone",
            tutorial::Entry{"Runtime API reference: cudaMemPoolCreate", "handle pool",
                            "returns"}))) {
        return ctx.verdict(false, "no pool, so nothing else was tried");
    }
    if (!ctx.claim(tutorial::documented(
            "device_access",
            "after give_device_access the device may read and write the pool's memory",
            s.accessible, "cudaMemPoolGetAccess says " + s.access,
            "a kernel would fault on the pool's memory, so none was launched. First step: give "
            "the device access: cudaMemPoolSetAccess(pool, &access, 1), with access.location = "
            "{cudaMemLocationTypeDevice, device} and access.flags = "
            "cudaMemAccessFlagsProtReadWrite",
            tutorial::Entry{"Runtime API reference: cudaMemPoolGetAccess", "location",
                            "returns"}))) {
        return ctx.verdict(false, "the device has no access to the pool, so nothing was allocated");
    }
    const bool ok = s.accessible && report_memory(ctx, s);
    return ctx.verdict(ok, format_bytes(s.bytes) + " of pinned host memory from the pool, " +
                               std::to_string(s.wrong) + " values wrong, " +
                               format_bytes(s.reserved) + " kept after the free");
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex02_pool",
        "Exercise (chapter 02_pinned): pinned host memory from a pool",
        {{"check",
          "a pool of pinned host memory: device access, a kernel's values, freed memory kept",
          {},
          true,
          check}},
        {},
        "02_pinned/exercises/pool.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
