// Checks of section properties: runs the walkthrough of ../properties.cpp (the attributes, a
// kernel through a mapping, two registrations, two copies at once), times its copies over rounds,
// and judges what each attribute predicted.
#include "02_pinned/properties.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/claim.hpp"
#include "common/harness/predictions.hpp"
#include "common/harness/report.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

#include <string>
#include <vector>

using tutorial::format;
using tutorial::Prediction;

namespace {

// The outcome of a call that is allowed to fail, in words.
std::string outcome(const char* call, cudaError_t status) {
    return std::string(call) + " returned " + cudaGetErrorName(status);
}

// What the section saw when it tried a property's behaviour: whether it was what the value
// predicts, and what happened, in words.
struct Tried {
    bool came_true;
    std::string seen;
};

// canMapHostMemory: 1 predicts that a kernel writes through the device pointer of mapped host
// memory, 0 that cudaHostGetDevicePointer refuses (step 2).
Tried try_mapped_memory(const Found& f) {
    if (f.mapped_alloc != cudaSuccess)
        return {false, outcome("cudaHostAlloc(Mapped)", f.mapped_alloc)};
    if (f.mapped_pointer != cudaSuccess || f.can_map_host_memory == 0)
        return {f.can_map_host_memory == 0 && f.mapped_pointer != cudaSuccess,
                outcome("cudaHostGetDevicePointer", f.mapped_pointer)};
    return {f.mapped_wrong == 0, f.mapped_wrong == 0
                                     ? "a kernel's 65536 values arrived in host memory"
                                     : "WRONG values arrived"};
}

// hostRegisterSupported and hostRegisterReadOnlySupported: 1 predicts that cudaHostRegister
// with these flags pins malloc memory, 0 that it refuses (step 3).
Tried try_registration(int value, cudaError_t status, const char* call) {
    return {(status == cudaSuccess) == (value != 0), outcome(call, status)};
}

// Step 4 over rounds, the walkthrough run once per round (so the three copies take turns and a
// slow moment of the link falls on all of them alike): both copies at once as a share of one
// after the other, medians of the GPU times.
double overlap_share(int device, std::size_t bytes, int rounds) {
    tutorial::StepTimes times;
    for (int r = 0; r < rounds; ++r) walkthrough(device, bytes);
    return times.median_ms(both_at_once) /
           (times.median_ms(upload_alone) + times.median_ms(download_alone));
}

// asyncEngineCount: both copies together take much less than one after the other where there
// are two or more copy engines. A share that does not agree is measured again with fresh rounds
// (as a measured claim is, claim.hpp), at most measure_attempts times in all.
Tried try_copy_engines(int device, int engines, std::size_t bytes, int rounds) {
    std::vector<double> shares;
    bool agrees = false;
    while (!agrees && static_cast<int>(shares.size()) < tutorial::measure_attempts) {
        shares.push_back(overlap_share(device, bytes, rounds));
        agrees = (shares.back() < 0.75) == (engines >= 2);
        if (!tutorial::why_timing_not_judged().empty()) break;
    }
    std::string seen = format("both took %.0f%% of one after the other", 100.0 * shares.back());
    if (shares.size() > 1) {
        seen += format(" (measurement %zu of at most %d; before:", shares.size(),
                       tutorial::measure_attempts);
        for (std::size_t i = 0; i + 1 < shares.size(); ++i)
            seen += format(" %.0f%%", 100.0 * shares[i]);
        seen += ")";
    }
    return {agrees, seen};
}

// hostRegisterSupported: 1 is the attribute's own promise, that the device supports host memory
// registration with cudaHostRegister (documented). At 0 the cudaHostRegister entry supports the
// call "only on" devices where the attribute is non-zero, a condition that names no error for
// trying anyway: what this driver then does is observed.
Prediction host_register(int value, const Tried& registered) {
    if (value) {
        return {"hostRegisterSupported",
                value,
                "malloc memory can be pinned this way",
                registered.came_true,
                registered.seen,
                tutorial::Evidence::documented,
                "",
                tutorial::Entry{"Runtime API reference: cudaDevAttrHostRegisterSupported",
                                "cudaHostRegister", "supports"}};
    }
    return {"hostRegisterSupported",
            value,
            "this registration is refused",
            registered.came_true,
            registered.seen,
            tutorial::Evidence::observed,
            "the cudaHostRegister entry supports the call only on devices where "
            "cudaDevAttrHostRegisterSupported is non-zero, and names no error for a call on "
            "another"};
}

}  // namespace

tutorial::Result run_properties(tutorial::Context& ctx) {
    // Under compute-sanitizer the timing is not judged, so a small copy and one round do.
    const bool timed = tutorial::why_timing_not_judged().empty();
    const std::size_t copy_bytes = timed ? (std::size_t{64} << 20) : (std::size_t{1} << 20);
    const Found f = walkthrough(ctx.device, copy_bytes);  // also the warm-up of the timed copies
    const Tried mapped = try_mapped_memory(f);
    const Tried registered =
        try_registration(f.host_register_supported, f.registered, "cudaHostRegister");
    const Tried read_only = try_registration(f.host_register_read_only_supported,
                                             f.registered_read_only, "cudaHostRegister(ReadOnly)");
    const Tried engines =
        try_copy_engines(ctx.device, f.async_engine_count, copy_bytes, timed ? 7 : 1);
    const std::vector<Prediction> predictions = {
        {"canMapHostMemory", f.can_map_host_memory,
         f.can_map_host_memory ? "a kernel writes through a mapped host pointer"
                               : "cudaHostGetDevicePointer refuses mapped host memory",
         mapped.came_true, mapped.seen, tutorial::Evidence::documented, "",
         f.can_map_host_memory
             ? tutorial::Entry{"Runtime API reference: cudaDevAttrCanMapHostMemory", "map", "can"}
             : tutorial::Entry{"Runtime API reference: cudaHostGetDevicePointer",
                               "cudaHostGetDevicePointer not support mapped", "will fail"}},
        host_register(f.host_register_supported, registered),
        {"hostRegisterReadOnlySupported", f.host_register_read_only_supported,
         f.host_register_read_only_supported ? "malloc memory can be pinned this way"
                                             : "this registration is refused",
         read_only.came_true, read_only.seen, tutorial::Evidence::documented, "",
         // 1: the attribute's own promise. 0: the cudaHostRegister entry's sentence on the flag,
         // for a device without the attribute, names the error.
         f.host_register_read_only_supported
             ? tutorial::Entry{"Runtime API reference: cudaDevAttrHostRegisterReadOnlySupported",
                               "cudaHostRegister cudaHostRegisterReadOnly", "supports"}
             : tutorial::Entry{"Runtime API reference: cudaHostRegister",
                               "cudaHostRegister cudaErrorNotSupported", "will"}},
        // A measured prediction: the overlap is timed, and not judged under compute-sanitizer.
        {"asyncEngineCount", f.async_engine_count,
         f.async_engine_count >= 2 ? "an upload and a download overlap in time"
                                   : "an upload and a download take turns",
         engines.came_true, engines.seen, tutorial::Evidence::timing, ""},
    };
    return tutorial::check_predictions(
        ctx, predictions,
        f.integrated
            ? "integrated = 1: the GPU shares the CPU's DRAM, so no PCIe link lies in between."
            : "integrated = 0: host memory is on the other side of a PCIe (or NVLink) link.");
}

TUTORIAL_SECTION(properties, run_properties);
