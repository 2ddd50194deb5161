// Checks of section sleep_wake: runs the steps of ../sleep_wake.cu on a buffer of known data,
// reads the free device memory after each, and asks the driver what a new mapping may do.
#include "06_vmm/sleep_wake.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/text.hpp"
#include "common/vmm.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using tutorial::format;
using tutorial::format_bytes;
using tutorial::free_device_memory;

constexpr std::uint32_t seed = 46;

struct Night {
    std::size_t bytes = 0;
    std::size_t free_awake = 0;   // free device memory with the buffer mapped
    std::size_t free_asleep = 0;  // ...after step 2
    std::size_t free_woken = 0;   // ...after step 3
    std::string new_access;       // cuMemGetAccess between cuMemMap and cuMemSetAccess
    bool same_address = false;    // the range after waking is the one reserved in step 1
    std::size_t wrong = 0;        // values read through the pointer taken before the sleep
};

Night one_night(int device, std::size_t wanted) {
    Night n;
    Sleeper s = allocate(device, wanted);
    n.bytes = s.bytes;
    const CUdeviceptr reserved = s.address;
    auto* data = reinterpret_cast<std::uint32_t*>(s.address);  // kept through the night
    const std::size_t count = s.bytes / sizeof(std::uint32_t);
    fill_on_device(data, count, seed);
    n.free_awake = free_device_memory();

    void* pinned_copy = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned_copy, s.bytes));
    put_to_sleep(s, pinned_copy);
    n.free_asleep = free_device_memory();

    remap(s);
    n.new_access = tutorial::vmm_access_name(tutorial::vmm_access(s.address, device));
    grant_and_restore(s, pinned_copy);
    n.free_woken = free_device_memory();
    n.same_address = s.address == reserved;
    n.wrong = mismatches_on_device(data, count, seed);

    free_for_good(s);
    CUDA_CHECK(cudaFreeHost(pinned_copy));
    return n;
}

double share_of(std::size_t from, std::size_t to, std::size_t bytes) {
    return to > from ? 100.0 * static_cast<double>(to - from) / static_cast<double>(bytes) : 0.0;
}

}  // namespace

// Child role: the same handle released twice, which the cuMemRelease entry leaves undefined.
int child_release_twice(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaFree(nullptr));  // the primary context, current
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    Sleeper s = allocate(device, 1);
    const CUmemGenericAllocationHandle handle = s.memory;
    void* pinned_copy = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned_copy, s.bytes));
    put_to_sleep(s, pinned_copy);  // releases the handle once
    const CUresult again = cuMemRelease(handle);
    std::printf("second cuMemRelease of the same handle -> %s\n",
                tutorial::driver_error_name(again));
    std::fflush(stdout);
    CUDA_CHECK(cudaFreeHost(pinned_copy));
    return 0;
}

tutorial::Result run_sleep_wake(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("VMM is not supported on this device");
    }
    const std::size_t wanted =
        ctx.size_or(tutorial::fit_in_free_memory(256 * tutorial::MiB, 0.25, 2 * tutorial::MiB));
    const Night n = one_night(ctx.device, wanted);

    const double freed = share_of(n.free_awake, n.free_asleep, n.bytes);
    const double taken = share_of(n.free_woken, n.free_asleep, n.bytes);
    tutorial::Table table({{"after"}, {"free device memory"}, {"change"}});
    table.add_row({"step 1 (mapped, filled)", format_bytes(n.free_awake), ""});
    table.add_row({"step 2 (unmapped, released)", format_bytes(n.free_asleep),
                   format("+%.0f%% of the buffer", freed)});
    table.add_row({"step 3 (mapped again, restored)", format_bytes(n.free_woken),
                   format("-%.0f%% of the buffer", taken)});
    std::printf("A buffer of %s, filled with known values, put to sleep and woken:\n\n",
                format_bytes(n.bytes).c_str());
    table.print();
    std::printf(
        "\nBetween cuMemMap and cuMemSetAccess, cuMemGetAccess said %s. After waking, a\n"
        "kernel read the buffer through the pointer taken before the sleep: %zu of %zu\n"
        "values wrong.\n\n",
        n.new_access.c_str(), n.wrong, n.bytes / sizeof(std::uint32_t));

    std::printf("The same handle released twice (in a child process):\n");
    const tutorial::ChildResult twice =
        tutorial::run_child("release_twice", std::vector<std::string>{std::to_string(ctx.device)});
    tutorial::print_child_output(twice);
    const std::string answer = tutorial::child_answer(twice, "second cuMemRelease");
    std::printf("   The child %s.\n\n", twice.describe().c_str());

    ctx.claim(tutorial::documented(
        "unmapping and releasing gives the physical memory back to the driver", freed >= 90.0,
        format("free device memory rose by %.0f%% of the buffer", freed),
        "another process or test allocated at the same time, or the memory is still mapped",
        "Driver API reference: cuMemUnmap, cuMemRelease (freed once no mapping and no handle "
        "is left)"));
    ctx.claim(tutorial::documented(
        "the addresses stay reserved: a new mapping there starts with no access",
        n.same_address && n.new_access == "PROT_NONE",
        "cuMemGetAccess said " + n.new_access + " before cuMemSetAccess",
        "the new mapping inherited the old grant",
        "Driver API reference: cuMemUnmap (the range becomes a reservation; new mappings start "
        "with no access)"));
    ctx.claim(tutorial::documented(
        "after waking, a pointer taken before the sleep reads the saved data", n.wrong == 0,
        format("%zu values wrong", n.wrong), "the restore copied to another range",
        "Driver API reference: cuMemUnmap (the reservation can be used for future cuMemMap "
        "calls)"));
    ctx.claim(tutorial::documented("waking takes the memory again", taken >= 90.0,
                                   format("free device memory fell by %.0f%% of the buffer", taken),
                                   "another process or test freed memory at the same time",
                                   "Driver API reference: cuMemCreate"));
    ctx.claim(
        tutorial::observed("releasing a handle a second time is refused",
                           answer.find("CUDA_SUCCESS") == std::string::npos && twice.succeeded(),
                           "the child: " + answer + ", and it " + twice.describe(),
                           "the cuMemRelease entry calls an invalid handle undefined"));
    const bool ok = freed >= 90.0 && taken >= 90.0 && n.same_address &&
                    n.new_access == "PROT_NONE" && n.wrong == 0;
    return ctx.verdict(ok, format("the memory went back (%.0f%%) and came back (%.0f%%) at the "
                                  "same addresses, %zu values wrong",
                                  freed, taken, n.wrong));
}

TUTORIAL_SECTION(sleep_wake, run_sleep_wake);
TUTORIAL_CHILD(release_twice, child_release_twice);
