// Claims: the lesson of a section, checked by measurement.
//
// A section that teaches "pinned memory uploads faster than pageable memory" measures both and
// states the lesson as a claim, with a threshold set well inside what real GPUs show:
//
//   ctx.claim(tutorial::at_least("a pinned 256 MiB upload beats a pageable one",
//                                pageable_ms / pinned_ms, 2.0, "x",
//                                "the copy engines could not reach the pageable memory's pages "
//                                "faster than the CPU stages them"));
//
// prints one line, and a claim that does not hold makes the section's verdict FAIL:
//
//   CLAIM held: a pinned 256 MiB upload beats a pageable one: measured 8.31x, needs >= 2x
//   CLAIM NOT held: ...: measured 1.12x, needs >= 2x. Most likely: <the reason given>
//   CLAIM not judged: ...: measured 1.12x; the run is under compute-sanitizer, ...
//
// Each claim carries its own kind, written where it is made:
// - measured (at_least, at_most): a ratio of quantities from the same run, never an absolute time;
//   not judged under compute-sanitizer, which slows every kernel and copy by different amounts.
// - documented (documented, documented_error): a behaviour the reference promises; `where` names
//   the Programming Guide section or the API reference entry that says it, and an expected error
//   code must be one that entry lists (.ci/check-references reads the installed headers' doc
//   comments, which are the reference text). Judged in every run; not held fails the section.
// - counted (counted_at_least, counted_at_most): a quantity the driver's Unified Memory counters
//   gave for one step (bytes moved, page faults; common/harness/um_counters.hpp), against a threshold.
//   Judged where the counters can be read; where they cannot, the section passes
//   counters.why_not() to ctx.claim and the claim is not judged.
// - observed (observed): what this driver did where the reference leaves the behaviour open
//   (undefined, unspecified, "may", or a precondition with no error named). Printed with the
//   driver's version; a driver that does otherwise is reported, never failed:
//
//   CLAIM observed on driver 580.159.04: a kernel writing read-only memory faults: ...
//   CLAIM observed otherwise on driver 600.1: ...: <what happened>; the reference leaves this
//         open (<why>), so the verdict does not rest on it
#pragma once

#include <string>

namespace tutorial {

enum class Evidence {
    timing,      // measured: a ratio of times or speeds; not judged under compute-sanitizer
    documented,  // a behaviour the reference promises: judged in every run
    observed,    // what this driver did where the reference leaves it open: never fails
    counted,     // measured by the driver's Unified Memory counters: not judged without them
};

struct Claim {
    std::string statement;  // the lesson, in a few words
    double measured = 0.0;
    double threshold = 0.0;
    bool at_least = true;  // holds when measured >= threshold; otherwise when measured <= it
    std::string unit;      // printed after each number: "x", "%", " GB/s"
    std::string if_not;    // the most likely reason, printed when the claim does not hold
    Evidence evidence = Evidence::timing;
    std::string seen;   // for a yes/no observation: what happened, printed instead of numbers
    std::string where;  // documented: the Guide section or API entry; observed: what it leaves open
};

// Timing claims: measured >= threshold, or measured <= threshold.
Claim at_least(std::string statement, double measured, double threshold, std::string unit,
               std::string if_not);
Claim at_most(std::string statement, double measured, double threshold, std::string unit,
              std::string if_not);
// Counted claims: measured >= threshold, or <=, where `measured` comes from the Unified Memory
// counters (bytes, faults). Not judged under compute-sanitizer, which holds the profiling
// interface the counters need.
Claim counted_at_least(std::string statement, double measured, double threshold, std::string unit,
                       std::string if_not);
Claim counted_at_most(std::string statement, double measured, double threshold, std::string unit,
                      std::string if_not);
// A documented behaviour: `seen` says what happened, in words; the claim holds when `held` is
// true. `where` names the Programming Guide section or the API reference entry that promises it
// ("Runtime API reference: cudaHostRegister").
Claim documented(std::string statement, bool held, std::string seen, std::string if_not,
                 std::string where);
// A documented error: the call gave `returned` (cudaGetErrorName or cuGetErrorName of its
// result) and the entry `where` lists `expected` for this case. Holds when they are the same.
Claim documented_error(std::string statement, std::string returned, std::string expected,
                       std::string if_not, std::string where);
// What this driver did where the reference leaves the behaviour open. `as_before` is true when
// it did what the course saw on driver 580.159.04; `open` says what the reference leaves open
// ("the cudaMemcpy entry calls a kind that does not match the pointers undefined").
Claim observed(std::string statement, bool as_before, std::string seen, std::string open);

enum class ClaimOutcome { held, not_held, not_judged, observed };

// Prints the claim's CLAIM line and returns its outcome. `why_not_judged`, when not empty, is
// why the claim cannot be judged on this device (a capability it lacks); the measured value is
// still shown. An observed claim's outcome is always `observed`.
ClaimOutcome judge_claim(const Claim& claim, const std::string& why_not_judged = "");

// Why timing claims are not judged in this run, or "" when they are: the program runs under
// compute-sanitizer (detected from the variables it sets for the program it runs, or from
// TUTORIAL_UNDER_SANITIZER=1, which the course's sanitize tests set).
std::string why_timing_not_judged();

// What a section says when it reports something CUDA does not promise, only this driver did:
// "observed on " + this_driver() reads "observed on driver 580.159.04". kernel_module_version()
// is the NVIDIA kernel module's version ("580.159.04", or "unknown").
std::string kernel_module_version();
std::string this_driver();

// Linux lists a "hypervisor" CPU flag inside a virtual machine.
bool running_in_virtual_machine();

}  // namespace tutorial
