// Checks of section granularity_errors: the calls of ../granularity_errors.cu that break a rule
// run in a child, which reports each answer; then the walkthrough, the way that keeps them all.
#include "06_vmm/granularity_errors.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <cstdlib>

using tutorial::ChildResult;
using tutorial::format_bytes;
using tutorial::print_child_output;
using tutorial::run_child;

// Child role: each call that breaks a rule, once (they are refused, and a sanitizer would count
// each refusal as an error, so they run here). One line per call, with the rule it breaks; exit 0
// when every one was refused. The range is aligned to the granularity, so that each call breaks
// only the rule it is named for.
int child_misaligned_calls(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const std::vector<Refusal> cases = break_the_rules(device);
    int accepted = 0;
    for (const Refusal& c : cases) {
        accepted += c.result == CUDA_SUCCESS;
        std::printf("%-44s -> %-24s  breaks %s\n", c.call.c_str(),
                    tutorial::driver_error_name(c.result), c.rule.c_str());
    }
    return accepted == 0 ? 0 : 3;
}

tutorial::Result run_granularity_errors(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("VMM is not supported on this device");
    }
    const std::size_t g = tutorial::vmm_granularity(tutorial::vmm_properties(ctx.device));
    std::printf(
        "Granularity: %s. Calls that each break one rule of their entry, in a child process:\n",
        format_bytes(g).c_str());
    const ChildResult child = run_child("misaligned_calls", {std::to_string(ctx.device)});
    print_child_output(child);
    std::printf("The child %s.\n\n", child.describe().c_str());

    // The way that keeps every rule: the walkthrough.
    const std::size_t wanted = g + 1;
    const Found f = walkthrough(ctx.device, wanted);
    const std::size_t bytes = f.bytes;
    const std::size_t wrong = f.wrong;
    std::printf(
        "round_up(%zu, %zu) = %zu: created, reserved with the granularity as alignment, mapped\n"
        "at the start of the reservation with offset 0, and used by a kernel: %zu values wrong.\n",
        wanted, g, bytes, wrong);
    std::printf(
        "\nThe entries state each rule as a requirement and name no error for breaking it: that\n"
        "every call is refused, and with which code, is what %s does.\n\n",
        tutorial::this_driver().c_str());
    ctx.claim(tutorial::observed(
        "rules_refused",
        "sizes, addresses and offsets that break their entry's rule are refused, none silently "
        "rounded",
        child.succeeded(), "the child " + child.describe(),
        "the cuMemCreate, cuMemAddressReserve and cuMemMap entries state the rules as "
        "requirements and name no error for breaking them"));
    // What the entries promise for a call that keeps their rules (the size a multiple of the
    // minimum granularity, the caller's duty): cuMemCreate's handle can be mapped with cuMemMap.
    ctx.claim(tutorial::documented(
        "rounded_up_works", "a size rounded up to the granularity, mapped at offset 0, works",
        wrong == 0, tutorial::format("%zu values wrong", wrong),
        "the access grant did not cover the mapping",
        tutorial::Entry{"Driver API reference: cuMemCreate", "handle cuMemMap", "can"}));
    return ctx.verdict(wrong == 0,
                       "the allocation that keeps every rule (rounded up, aligned, offset 0) "
                       "worked; the 5 calls that break one are this driver's to refuse");
}

TUTORIAL_SECTION(granularity_errors, run_granularity_errors);
TUTORIAL_CHILD(misaligned_calls, child_misaligned_calls);
