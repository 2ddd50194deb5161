// Checks of section sleep_wake: runs the walkthrough of ../sleep_wake.cu reading the free device
// memory at its steps, and releases a handle twice in a child.
#include "06_vmm/sleep_wake.cu"

#include "06_vmm/helpers/step_memory.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using tutorial::format;
using tutorial::format_bytes;
using vmm_checks::fell_by;

// The walkthrough once, with the free device memory read at its steps.
struct Night {
    Found found;
    std::size_t awake = 0, asleep = 0, woken = 0;  // free device memory at each
};

Night one_night(int device, std::size_t wanted) {
    vmm_checks::StepMemory memory;
    Night n;
    n.found = walkthrough(device, wanted);
    n.awake = memory.at_start(sleep_step).back();
    n.asleep = memory.at_end(sleep_step).back();
    n.woken = memory.at_end(wake_step).back();
    return n;
}

double freed(const Night& n) {
    return fell_by(n.asleep, n.awake, n.found.bytes);  // free memory rose by this much
}
double taken(const Night& n) {
    return fell_by(n.asleep, n.woken, n.found.bytes);
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
    walkthrough(ctx.device, 1);  // loads the kernels first: their code takes device memory too
    const Night n = one_night(ctx.device, wanted);
    const Found& f = n.found;

    tutorial::Table table({{"after"}, {"free device memory"}, {"change"}});
    table.add_row({"1. mapped, filled", format_bytes(n.awake), ""});
    table.add_row({"2. saved, unmapped, released", format_bytes(n.asleep),
                   format("+%.0f%% of the buffer", 100 * freed(n))});
    table.add_row({"3. mapped again, granted, restored", format_bytes(n.woken),
                   format("-%.0f%% of the buffer", 100 * taken(n))});
    std::printf("A buffer of %s, filled with known values, put to sleep and woken:\n\n",
                format_bytes(f.bytes).c_str());
    table.print();
    const std::string new_access = tutorial::vmm_access_name(f.new_access);
    std::printf(
        "\nWoken at %s addresses. Between cuMemMap and cuMemSetAccess, cuMemGetAccess said %s.\n"
        "A kernel read the buffer through the pointer taken before the sleep: %zu of %zu values\n"
        "wrong.\n\n",
        f.same_address ? "the same" : "OTHER", new_access.c_str(), f.wrong,
        f.bytes / sizeof(std::uint32_t));

    std::printf("The same handle released twice (in a child process):\n");
    const tutorial::ChildResult twice =
        tutorial::run_child("release_twice", std::vector<std::string>{std::to_string(ctx.device)});
    tutorial::print_child_output(twice);
    const std::string answer = tutorial::child_answer(twice, "second cuMemRelease");
    std::printf("   The child %s.\n\n", twice.describe().c_str());

    // Free device memory is the whole device's (cudaMemGetInfo): measured, and measured again
    // where another process moved it meanwhile. Below 32 MiB one granule of the driver's own
    // books would be a large share of the buffer.
    const std::string small = tutorial::why_too_small(
        f.bytes, 32 << 20, "one granule the driver keeps for its own books would be most of it");
    ctx.claim(tutorial::at_least("sleep_gives_back",
                                 "unmapping and releasing gives the physical memory back to the "
                                 "driver (rise of free device memory / the buffer)",
                                 freed(n), 0.9, "x",
                                 "another process allocated at the same time, or the memory is "
                                 "still mapped")
                  .again([&] { return freed(one_night(ctx.device, wanted)); }),
              small);
    ctx.claim(tutorial::documented(
        "new_mapping_no_access",
        "a new mapping at the still-reserved addresses starts with no access",
        f.same_address && new_access == "PROT_NONE",
        "cuMemGetAccess said " + new_access + " before cuMemSetAccess",
        "the new mapping inherited the old grant",
        tutorial::Entry{"Driver API reference: cuMemUnmap", "mappings no accessibility",
                        "start with"}));
    ctx.claim(tutorial::documented(
        "old_pointer_reads_saved",
        "after waking, a pointer taken before the sleep reads the saved data", f.wrong == 0,
        format("%zu values wrong", f.wrong), "the restore copied to another range",
        tutorial::Entry{"Driver API reference: cuMemUnmap", "cuMemMap", "can"}));
    ctx.claim(
        tutorial::at_least("wake_takes_memory",
                           "waking takes the memory again (fall of free device memory / "
                           "the buffer)",
                           taken(n), 0.9, "x", "another process freed memory at the same time")
            .again([&] { return taken(one_night(ctx.device, wanted)); }),
        small);
    ctx.claim(
        tutorial::observed("release_twice_refused", "releasing a handle a second time is refused",
                           answer.find("CUDA_SUCCESS") == std::string::npos && twice.succeeded(),
                           "the child: " + answer + ", and it " + twice.describe(),
                           "the cuMemRelease entry calls an invalid handle undefined"));
    const bool ok = f.same_address && new_access == "PROT_NONE" && f.wrong == 0;
    return ctx.verdict(ok, format("woken at the same addresses, with no access until granted, "
                                  "%zu values wrong",
                                  f.wrong));
}

TUTORIAL_SECTION(sleep_wake, run_sleep_wake);
TUTORIAL_CHILD(release_twice, child_release_twice);
