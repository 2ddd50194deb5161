// The course's check of exercise ex06_sleep (the task is in ../sleep.cu): the learner's
// go_to_sleep() must save the buffer and give its physical memory back to the driver, and
// wake_up() must bring it back at the same address, usable and holding the same values.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/driver.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

// Written by the learner (exercises/sleep.cu).
void go_to_sleep(CUdeviceptr address, std::size_t bytes, CUmemGenericAllocationHandle* memory,
                 void* pinned_copy);
CUdeviceptr wake_up(CUdeviceptr address, std::size_t bytes, const CUmemAllocationProp& prop,
                    CUmemGenericAllocationHandle* memory, const void* pinned_copy);

namespace {

using tutorial::Context;
using tutorial::format;
using tutorial::format_bytes;
using tutorial::MiB;
using tutorial::Result;

constexpr std::uint32_t known_values = 46;  // the buffer holds pattern(i, 46)
constexpr std::uint32_t other_values = 47;  // written into freed device memory meanwhile

std::uint32_t* values(CUdeviceptr address) {
    return reinterpret_cast<std::uint32_t*>(address);
}

// What cuMemGetAccess says `device` may do at `address`; where nothing is mapped the driver
// refuses to say, and that is what comes back.
std::string access_of(CUdeviceptr address, int device) {
    const auto cuMemGetAccess = DRIVER_FUNCTION(cuMemGetAccess);
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = device;
    unsigned long long flags = 0;
    const CUresult result = cuMemGetAccess(&flags, &location, address);
    if (result != CUDA_SUCCESS) {
        return std::string("nothing mapped (") + tutorial::driver_error_name(result) + ")";
    }
    return tutorial::vmm_access_name(flags);
}

// The device memory the sleep freed may be what wake_up() gets back. Other values written into
// it meanwhile make sure that a wake without the restore cannot find the old values by chance.
void overwrite_freed_memory(std::size_t bytes) {
    std::uint32_t* other = nullptr;
    CUDA_CHECK(cudaMalloc(&other, bytes));
    fill_on_device(other, bytes / sizeof(std::uint32_t), other_values);
    CUDA_CHECK(cudaFree(other));
}

struct Night {
    std::size_t bytes = 0;
    CUdeviceptr reserved = 0;     // where the check mapped the buffer
    std::size_t saved_wrong = 0;  // values of pinned_copy that are not the buffer's
    std::size_t free_awake = 0;   // free device memory before go_to_sleep
    std::size_t free_asleep = 0;  // ...and after it
    CUdeviceptr woken = 0;        // what wake_up returned
    std::string access;           // cuMemGetAccess there, for the device
    bool usable = false;          // read-write at the first and the last granule
    std::size_t wrong = 0;        // values not back after wake_up (read only when usable)
};

Night one_night(int device) {
    Night n;
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);
    const std::size_t granularity = tutorial::vmm_granularity(prop);
    n.bytes = tutorial::round_up(64 * MiB, granularity);
    const std::size_t count = n.bytes / sizeof(std::uint32_t);
    // Step 1 of the section, done here: addresses, memory, mapping, access, known values.
    CUmemGenericAllocationHandle memory = tutorial::vmm_create(prop, n.bytes);
    n.reserved = tutorial::vmm_reserve(n.bytes, 0);
    tutorial::vmm_map(n.reserved, n.bytes, memory);
    tutorial::vmm_set_access(n.reserved, n.bytes, device);
    fill_on_device(values(n.reserved), count, known_values);
    std::uint32_t* pinned_copy = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned_copy, n.bytes));
    std::memset(pinned_copy, 0, n.bytes);  // what go_to_sleep does not save reads as wrong
    n.free_awake = tutorial::free_device_memory();

    go_to_sleep(n.reserved, n.bytes, &memory, pinned_copy);
    n.free_asleep = tutorial::free_device_memory();
    n.saved_wrong = mismatches_on_host(pinned_copy, count, known_values);
    overwrite_freed_memory(n.bytes);

    n.woken = wake_up(n.reserved, n.bytes, prop, &memory, pinned_copy);
    // A kernel reading memory the device may not access would fault: ask the driver first.
    const std::string first = access_of(n.woken, device);
    const std::string last = access_of(n.woken + n.bytes - granularity, device);
    n.access = first == last ? first : first + " at the start, " + last + " at the end";
    n.usable = first == "PROT_READWRITE" && last == "PROT_READWRITE";
    if (n.usable) n.wrong = mismatches_on_device(values(n.woken), count, known_values);

    if (n.usable && n.woken == n.reserved && memory != 0) {
        tutorial::vmm_unmap(n.reserved, n.bytes);
        tutorial::vmm_release(memory);
        tutorial::vmm_free(n.reserved, n.bytes);
    }
    // Otherwise the buffer is as the learner's code left it, which the check cannot undo
    // safely; the driver takes it all back when the program ends, right after the report.
    CUDA_CHECK(cudaFreeHost(pinned_copy));
    return n;
}

// What go_to_sleep gave back: the rise of free device memory, as a share of the buffer.
double freed_share(const Night& n) {
    if (n.free_asleep <= n.free_awake) return 0.0;
    return static_cast<double>(n.free_asleep - n.free_awake) / static_cast<double>(n.bytes);
}

Result report(Context& ctx, const Night& n) {
    const std::size_t count = n.bytes / sizeof(std::uint32_t);
    const double freed = freed_share(n);
    const bool saved = ctx.claim(tutorial::documented(
        "saves_values", "go_to_sleep saves every value in the pinned copy", n.saved_wrong == 0,
        format("%zu of %zu values saved wrong", n.saved_wrong, count),
        "nothing, or not all, was copied out. First step: in go_to_sleep, cudaMemcpy the `bytes` "
        "at `address` into pinned_copy (cudaMemcpyDeviceToHost)",
        tutorial::Entry{"Runtime API reference: cudaMemcpy", "src dst cudaMemcpyDeviceToHost",
                        "copies"}));
    // Free device memory, from cudaMemGetInfo: measured (another process may allocate meanwhile,
    // so a shortfall is measured again, with a night of its own), and not judged under
    // compute-sanitizer, which takes device memory of its own.
    const bool given_back = ctx.claim(
        tutorial::at_least("memory_given_back",
                           "while the buffer sleeps, its physical memory is back with the driver "
                           "(rise of free device memory / the buffer)",
                           freed, 0.9, "x",
                           "the memory is still mapped, or its handle still held. First step: in "
                           "go_to_sleep, cuMemUnmap(address, bytes), then cuMemRelease(*memory)")
            .again([&] { return freed_share(one_night(ctx.device)); }));
    const bool same = n.woken == n.reserved;
    ctx.claim(tutorial::documented(
        "same_address", "wake_up brings the buffer back at its own address", same,
        same ? "the same address"
             : format("0x%llx instead of 0x%llx", static_cast<unsigned long long>(n.woken),
                      static_cast<unsigned long long>(n.reserved)),
        "the buffer moved, and every pointer into it is stale. First step: cuMemMap the new "
        "memory at `address` itself: its reservation outlives the sleep",
        tutorial::Entry{"Driver API reference: cuMemUnmap", "cuMemMap", "can"}));
    const bool mapped = n.access.find("nothing mapped") == std::string::npos;
    ctx.claim(tutorial::documented(
        "usable_after_wake", "after wake_up the device may read and write the whole buffer",
        n.usable, "cuMemGetAccess: " + n.access,
        mapped ? "a new mapping starts with no access. First step: in wake_up, after cuMemMap, "
                 "cuMemSetAccess(address, bytes, &access, 1) with PROT_READWRITE for "
                 "prop.location"
               : "no memory is mapped there. First step: in wake_up, cuMemCreate(memory, bytes, "
                 "&prop, 0), then cuMemMap(address, bytes, 0, *memory, 0)",
        tutorial::Entry{"Programming Guide, E.7 Control Access Rights", "cuMemSetAccess", "允许"}));
    ctx.claim(tutorial::documented(
        "values_back", "after wake_up the buffer holds the values it had before the sleep",
        n.usable && n.wrong == 0,
        n.usable ? format("%zu of %zu values wrong", n.wrong, count)
                 : "not read: a kernel would fault on memory it may not access",
        "the new memory was not filled from the copy. First step: in wake_up, after "
        "cuMemSetAccess, cudaMemcpy pinned_copy back to `address` (cudaMemcpyHostToDevice)",
        tutorial::Entry{"Runtime API reference: cudaMemcpy", "src dst cudaMemcpyHostToDevice",
                        "copies"}));
    const bool ok = saved && given_back && same && n.usable && n.wrong == 0;
    const std::string back = n.usable ? format("%zu values wrong", n.wrong) : "values not read";
    return ctx.verdict(ok, format("saved %s, %.0f%% of the buffer freed while asleep, woken %s, %s",
                                  n.saved_wrong == 0 ? "all" : "NOT all", 100 * freed,
                                  same ? "in place" : "elsewhere", back.c_str()));
}

Result check(Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("this device does not support virtual memory management");
    }
    const Night n = one_night(ctx.device);
    std::printf("a %s buffer at 0x%llx, filled with known values\n", format_bytes(n.bytes).c_str(),
                static_cast<unsigned long long>(n.reserved));
    std::printf("after go_to_sleep: free device memory %s -> %s; %zu values saved wrong\n",
                format_bytes(n.free_awake).c_str(), format_bytes(n.free_asleep).c_str(),
                n.saved_wrong);
    std::printf("after wake_up:     at 0x%llx; cuMemGetAccess %s\n",
                static_cast<unsigned long long>(n.woken), n.access.c_str());
    return report(ctx, n);
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex06_sleep",
        "Exercise (chapter 06_vmm): give a buffer's memory back and take it again, same address",
        {{"check",
          "go_to_sleep, wake_up: saved, memory freed, same address, values back",
          {},
          true,
          check}},
        {},
        "06_vmm/exercises/sleep.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
