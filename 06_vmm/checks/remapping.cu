// Checks of section remapping: maps two allocations at one range in turns with ../remapping.cu,
// checking each one's data every round, and makes the forbidden calls in a child.
#include "06_vmm/remapping.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::ChildResult;
using tutorial::format;
using tutorial::format_bytes;

// Child role: the calls the rules forbid, one line each. A refused call here would count as an
// error under compute-sanitizer, and a range freed while mapped may leave the driver's books in a
// state this process should not go on with. Exit 0 when both mappings over a mapping were refused.
int child_mapping_misuse(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);
    const std::size_t g = tutorial::vmm_granularity(prop);
    const CUmemGenericAllocationHandle a = tutorial::vmm_create(prop, g);
    const CUmemGenericAllocationHandle b = tutorial::vmm_create(prop, g);
    const CUdeviceptr range = tutorial::vmm_reserve(g, 0);
    tutorial::vmm_map(range, g, a);

    const Forbidden f = forbidden_calls(range, g, a, b);
    const CUresult over = f.over;
    const CUresult same = f.same;
    std::printf("%-48s -> %s\n", "cuMemMap(b) over the range where a is mapped",
                tutorial::driver_error_name(over));
    std::printf("%-48s -> %s\n", "cuMemMap(a) again over its own mapping",
                tutorial::driver_error_name(same));
    std::printf("%-48s -> %s\n", "cuMemAddressFree of the range, a still mapped",
                tutorial::driver_error_name(f.freed));
    (void)cudaGetLastError();
    return over != CUDA_SUCCESS && same != CUDA_SUCCESS ? 0 : 3;
}

namespace {

struct Rounds {
    int rounds = 0;
    std::size_t wrong = 0;  // values that were not what the mapped allocation holds
};

// Maps allocations a and b at one reserved range in turn, `rounds` times. Each is filled once,
// the first time it is mapped; after that, every mapping must show what it was filled with,
// although the range held the other allocation in between.
Rounds map_in_turns(int device, int rounds) {
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);
    const std::size_t bytes = tutorial::vmm_granularity(prop);
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const CUmemGenericAllocationHandle memory[2] = {tutorial::vmm_create(prop, bytes),
                                                    tutorial::vmm_create(prop, bytes)};
    const std::uint32_t fill_value[2] = {43, 47};  // which pattern each one holds
    const CUdeviceptr range = tutorial::vmm_reserve(bytes, 0);
    auto* data = reinterpret_cast<std::uint32_t*>(range);
    Rounds result;
    for (int round = 0; round < rounds; ++round) {
        const int which = round % 2;
        map_at(range, bytes, memory[which], device);
        if (round < 2) fill_on_device(data, count, fill_value[which]);
        const std::size_t wrong = mismatches_on_device(data, count, fill_value[which]);
        result.wrong += wrong;
        std::printf("round %d: %c mapped at 0x%llx, %s, %zu of %zu values wrong\n", round + 1,
                    which == 0 ? 'a' : 'b', static_cast<unsigned long long>(range),
                    round < 2 ? "filled" : "read back", wrong, count);
        unmap(range, bytes);
        ++result.rounds;
    }
    tutorial::vmm_free(range, bytes);
    tutorial::vmm_release(memory[0]);
    tutorial::vmm_release(memory[1]);
    return result;
}

}  // namespace

tutorial::Result run_remapping(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("VMM is not supported on this device");
    }
    const int rounds = ctx.quick() ? 4 : 8;
    std::printf(
        "Two allocations a and b of one granule (%s), mapped at one reserved range in turns,\n"
        "%d rounds: map, grant access, (fill the first time,) check, unmap.\n\n",
        format_bytes(tutorial::vmm_granularity(tutorial::vmm_properties(ctx.device))).c_str(),
        rounds);
    const Rounds turns = map_in_turns(ctx.device, rounds);
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

    ctx.claim(tutorial::documented(
        "one range can be mapped and unmapped again and again, each time with another "
        "allocation, and each allocation keeps its data while unmapped",
        turns.wrong == 0 && turns.rounds == rounds,
        format("%d rounds, %zu values wrong", turns.rounds, turns.wrong),
        "the access was not granted again after a new mapping",
        "Driver API reference: cuMemUnmap"));
    const bool over_refused = over.rfind("CUDA_ERROR", 0) == 0 && same.rfind("CUDA_ERROR", 0) == 0;
    ctx.claim(tutorial::documented("a range that is mapped cannot be mapped over", over_refused,
                                   "cuMemMap returned " + over + ", and " + same + " for a again",
                                   "this driver replaced the mapping silently",
                                   "Driver API reference: cuMemMap"));
    ctx.claim(tutorial::observed("a range still mapped is not given back by cuMemAddressFree",
                                 freed.rfind("CUDA_ERROR", 0) == 0,
                                 "cuMemAddressFree returned " + freed,
                                 "the Guide (E.4) asks for the whole range to be unmapped before "
                                 "cuMemAddressFree and names no error for a range still mapped"));
    return ctx.verdict(turns.wrong == 0 && over_refused,
                       format("%d rounds of mapping in turns kept both allocations' data, and "
                              "mapping over a mapped range was refused (both ways)",
                              turns.rounds));
}

TUTORIAL_SECTION(remapping, run_remapping);
TUTORIAL_CHILD(mapping_misuse, child_mapping_misuse);
