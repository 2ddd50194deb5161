// Checks of section remapping: runs the walkthrough of ../remapping.cu (two allocations mapped at
// one range in turns), then its forbidden calls in a child.
#include "06_vmm/remapping.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdint>
#include <cstdlib>

using tutorial::ChildResult;
using tutorial::format;
using tutorial::format_bytes;

// Child role: the calls the rules forbid, one line each. A refused call here would count as an
// error under compute-sanitizer, and a range freed while mapped may leave the driver's books in a
// state this process should not go on with. Exit 0 when both mappings over a mapping were refused.
int child_mapping_misuse(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const Forbidden f = forbidden_calls(device);
    std::printf("%-48s -> %s\n", "cuMemMap(b) over the range where a is mapped",
                tutorial::driver_error_name(f.over));
    std::printf("%-48s -> %s\n", "cuMemMap(a) again over its own mapping",
                tutorial::driver_error_name(f.same));
    std::printf("%-48s -> %s\n", "cuMemAddressFree of the range, a still mapped",
                tutorial::driver_error_name(f.freed));
    (void)cudaGetLastError();
    return f.over != CUDA_SUCCESS && f.same != CUDA_SUCCESS ? 0 : 3;
}

tutorial::Result run_remapping(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("VMM is not supported on this device");
    }
    const int rounds = ctx.quick() ? 4 : 8;
    const Found f = walkthrough(ctx.device, rounds);
    std::printf(
        "Two allocations a and b of one granule (%s), mapped at one reserved range (0x%llx) in\n"
        "turns, %d rounds: map, grant access, (fill the first time,) check, unmap.\n\n",
        format_bytes(f.bytes).c_str(), static_cast<unsigned long long>(f.range), rounds);
    std::size_t wrong = 0;
    for (std::size_t round = 0; round < f.wrong.size(); ++round) {
        wrong += f.wrong[round];
        std::printf("round %zu: %c mapped, %s, %zu of %zu values wrong\n", round + 1,
                    round % 2 == 0 ? 'a' : 'b', round < 2 ? "filled" : "read back", f.wrong[round],
                    f.bytes / sizeof(std::uint32_t));
    }
    std::printf(
        "\nThe range is only a window: unmapping closes it, and the memory behind it keeps its\n"
        "contents for as long as its handle is held.\n\n"
        "What the rules forbid, in a child process:\n");
    const ChildResult child = tutorial::run_child("mapping_misuse", {std::to_string(ctx.device)});
    tutorial::print_child_output(child);
    std::printf("The child %s.\n\n", child.describe().c_str());
    const std::string over = tutorial::child_answer(child, "cuMemMap(b) over");
    const std::string same = tutorial::child_answer(child, "cuMemMap(a) again");
    const std::string freed = tutorial::child_answer(child, "cuMemAddressFree of the range");

    const int done = static_cast<int>(f.wrong.size());
    ctx.claim(tutorial::documented(
        "remap_keeps_data",
        "one range can be remapped with another allocation each time, each keeping its data while "
        "unmapped",
        wrong == 0 && done == rounds, format("%d rounds, %zu values wrong", done, wrong),
        "the access was not granted again after a new mapping",
        tutorial::Entry{"Driver API reference: cuMemUnmap", "cuMemMap", "can"}));
    // The cuMemMap entry says it "can only create mappings on VA range reservations that are
    // not currently mapped" and names no error for trying: what this driver does is observed.
    const bool over_refused = over.rfind("CUDA_ERROR", 0) == 0 && same.rfind("CUDA_ERROR", 0) == 0;
    ctx.claim(tutorial::observed(
        "map_over_refused", "a range that is mapped cannot be mapped over", over_refused,
        "cuMemMap returned " + over + ", and " + same + " for a again",
        "the cuMemMap entry says it can only create mappings on reservations that are not "
        "currently mapped, and names no error for trying"));
    ctx.claim(tutorial::observed(
        "free_mapped_refused", "a range still mapped is not given back by cuMemAddressFree",
        freed.rfind("CUDA_ERROR", 0) == 0, "cuMemAddressFree returned " + freed,
        "the Guide (E.4) asks for the whole range to be unmapped before "
        "cuMemAddressFree and names no error for a range still mapped"));
    return ctx.verdict(wrong == 0 && done == rounds,
                       format("%d rounds of mapping in turns kept both allocations' data", done));
}

TUTORIAL_SECTION(remapping, run_remapping);
TUTORIAL_CHILD(mapping_misuse, child_mapping_misuse);
