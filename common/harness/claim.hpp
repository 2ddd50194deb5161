// Claims: the lesson of a section, checked by measurement.
//
// A section that teaches "pinned memory uploads faster than pageable memory" measures both and
// states the lesson as a claim, with a threshold set well inside what real GPUs show:
//
//   ctx.claim(tutorial::at_least("pinned_beats_pageable",
//                                "a pinned 256 MiB upload beats a pageable one",
//                                pageable_ms / pinned_ms, 2.0, "x",
//                                "the copy engines could not reach the pageable memory's pages "
//                                "faster than the CPU stages them")
//                  .again([&] { const Times t = time_uploads(); return t.pageable / t.pinned; }));
//
// prints one line, and a claim that does not hold makes the section's verdict FAIL:
//
//   CLAIM held: a pinned 256 MiB upload beats a pageable one: measured 8.31x, needs >= 2x
//   CLAIM NOT held: ...: measured 1.12x, 1.31x, 1.20x (3 measurements), needs >= 2x. Most likely: <why>
//   CLAIM not judged: ...: measured 1.12x; the run is under compute-sanitizer, ...
//
// The first argument is the claim's identifier: lower case, unique in its section, stable when the
// sentence changes. The tests name claims by it (tutorial_add_test's CLAIMS), so a claim's
// sentence lives in one place, the checks file that makes it.
//
// Each claim carries its own kind, written where it is made:
// - measured (at_least, at_most): a ratio of quantities from the same run, never an absolute time;
//   not judged under compute-sanitizer, which slows every kernel and copy by different amounts.
//   A shared host can slow one side of a ratio for a moment, so a measured claim that falls short
//   is measured again, with fresh interleaved rounds (`again`), up to measure_attempts times in
//   all, before it is NOT held; its line says how many measurements it took.
// - documented (documented, documented_error): a behaviour the reference promises for the very
//   case judged. `Entry` names the Programming Guide section or the API reference entry, the
//   words of its text that name the case and its own word for the promise; .ci/check-references
//   finds both in ONE sentence of the installed headers' doc comments (the Runtime and Driver API
//   reference) or of the source documents' Guide sections, and refuses a sentence that does not
//   promise the case (a condition, a duty on the caller, a possibility, undefined, unspecified,
//   a negation). Judged in every run; not held fails the section.
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

#include <functional>
#include <string>
#include <vector>

namespace tutorial {

enum class Evidence {
    timing,      // measured: a ratio of times or speeds; not judged under compute-sanitizer
    documented,  // a behaviour the reference promises: judged in every run
    observed,    // what this driver did where the reference leaves it open: never fails
    counted,     // measured by the driver's Unified Memory counters: not judged without them
};

// Where the reference promises a documented claim, in its own words:
//   Entry{"Runtime API reference: cudaDeviceDisablePeerAccess",
//         "cudaErrorPeerAccessNotEnabled not enabled", "returns"}
// names the sentence "Returns cudaErrorPeerAccessNotEnabled if direct access to memory on
// peerDevice has not yet been enabled from the current device."
// `where` is "Runtime API reference: <function, enum value, attribute or module>", "Driver API
// reference: ...", or "Programming Guide, <section>" (the appendices with the letters and numbers
// the source documents use, "N.2.2.7 Memcpy()/Memset() Behavior With Managed Memory"), or a POSIX
// or Linux man page. `terms`, separated by spaces: the words of that entry's text that name the
// case judged: the value, flag, parameter or situation ("directManagedMemAccessFromHost=1"), and
// for an error code the code and its case ("cudaErrorMemoryAllocation failure"); a case that is
// itself a negation names the negating word ("pageable without cudaHostRegister"). `modal`: the
// entry's own word for the promise, as written: a verb the reference states what a call does in
// ("copies", "blocks", "passes back", "supports", "enqueues", "ensures"), "will", "returns", a
// granted "may" ("the function may always use memory attached to the stream"), a predicate ("is
// valid", "is always", "will fail", "is returned"), a negative promise with its negation ("will
// not", 不会), "defaults" for a "(default 0)", or the source document's (将, 允许, 确保, 是安全的).
// Terms and modal stand in ONE sentence, which promises the case; a sentence that points back
// ("An error will be returned in this case.", 这可确保 ...) is read with the one before it. "is"
// alone proves nothing but a definition; a duty on the caller ("kind must be one of") promises
// nothing. `python3 .ci/check-references --list` prints the sentence each entry names.
struct Entry {
    std::string where;
    std::string terms;
    std::string modal;
};

struct Claim {
    std::string id;         // stable identifier, unique in its section: "prefetch_beats_faults"
    std::string statement;  // the lesson, in a few words
    double measured = 0.0;
    double threshold = 0.0;
    bool at_least = true;  // holds when measured >= threshold; otherwise when measured <= it
    std::string unit;      // printed after each number: "x", "%", " GB/s"
    std::string if_not;    // the most likely reason, printed when the claim does not hold
    Evidence evidence = Evidence::timing;
    std::string seen;   // for a yes/no observation: what happened, printed instead of numbers
    std::string where;  // documented: the Guide section or API entry; observed: what it leaves open
    Entry entry;        // documented: the entry's own terms (Entry above)
    // Measured claims: measures the same quantity again, with fresh rounds (see above).
    std::function<double()> measure_again;

    // A measured claim that falls short is measured again by `measure`, with fresh interleaved
    // rounds: `.again([&] { return time_ratio(); })`.
    Claim&& again(std::function<double()> measure) &&;
};

// How many measurements a measured claim may take in all before it is NOT held.
constexpr int measure_attempts = 3;

// Timing claims: measured >= threshold, or measured <= threshold.
Claim at_least(std::string id, std::string statement, double measured, double threshold,
               std::string unit, std::string if_not);
Claim at_most(std::string id, std::string statement, double measured, double threshold,
              std::string unit, std::string if_not);
// Counted claims: measured >= threshold, or <=, where `measured` comes from the Unified Memory
// counters (bytes, faults). Not judged under compute-sanitizer, which holds the profiling
// interface the counters need.
Claim counted_at_least(std::string id, std::string statement, double measured, double threshold,
                       std::string unit, std::string if_not);
Claim counted_at_most(std::string id, std::string statement, double measured, double threshold,
                      std::string unit, std::string if_not);
// A documented behaviour: `seen` says what happened, in words; the claim holds when `held` is
// true. `entry` names where the reference promises it, in its own terms (Entry above).
Claim documented(std::string id, std::string statement, bool held, std::string seen,
                 std::string if_not, Entry entry);
// A documented error: the call gave `returned` (cudaGetErrorName or cuGetErrorName of its
// result) and `entry` lists `expected` for this case (`expected` is one of its terms). Holds when
// they are the same.
Claim documented_error(std::string id, std::string statement, std::string returned,
                       std::string expected, std::string if_not, Entry entry);
// What this driver did where the reference leaves the behaviour open. `as_before` is true when
// it did what the course saw on driver 580.159.04; `open` says what the reference leaves open
// ("the cudaMemcpy entry calls a kind that does not match the pointers undefined").
Claim observed(std::string id, std::string statement, bool as_before, std::string seen,
               std::string open);

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
