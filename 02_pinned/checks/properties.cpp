// Checks of section properties: tries the behaviour each attribute of ../properties.cpp predicts
// (a kernel through a mapping, two registrations, two copies at once, timed) and judges each.
#include "02_pinned/properties.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/predictions.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"

#include <string>
#include <vector>

using tutorial::format;
using tutorial::Prediction;

namespace {

// The outcome of a call that is allowed to fail, in words.
std::string outcome(const char* call, cudaError_t status) {
    cudaGetLastError();  // a refused call leaves its error behind; this test expected it
    return std::string(call) + " returned " + cudaGetErrorName(status);
}

// What the section saw when it tried a property's behaviour: whether it was what the value
// predicts, and what happened, in words.
struct Tried {
    bool came_true;
    std::string seen;
};

// canMapHostMemory: 1 predicts that a kernel writes through the device pointer of mapped host
// memory, 0 that cudaHostGetDevicePointer refuses (Step 2).
Tried try_mapped_memory(int value) {
    const MappedWrite w = write_through_mapping(1 << 16);
    if (w.allocated != cudaSuccess) return {false, outcome("cudaHostAlloc(Mapped)", w.allocated)};
    Tried t{value == 0 && w.mapped != cudaSuccess, outcome("cudaHostGetDevicePointer", w.mapped)};
    if (w.mapped == cudaSuccess && value != 0) {
        t.came_true = w.wrong == 0;
        t.seen =
            t.came_true ? "a kernel's 65536 values arrived in host memory" : "WRONG values arrived";
    }
    return t;
}

// hostRegisterSupported and hostRegisterReadOnlySupported: 1 predicts that cudaHostRegister
// with these flags pins malloc memory, 0 that it refuses (Step 3).
Tried try_registration(int value, unsigned int flags) {
    const cudaError_t status = register_malloc_memory(flags);
    return {(status == cudaSuccess) == (value != 0),
            outcome(flags == cudaHostRegisterReadOnly ? "cudaHostRegister(ReadOnly)"
                                                      : "cudaHostRegister",
                    status)};
}

// asyncEngineCount (Step 4): both copies together take much less than one after the other where
// there are two or more copy engines.
Tried try_copy_engines(int engines, std::size_t bytes) {
    const TwoWays t = two_ways(bytes);
    // The three timings take turns, round after round, so that a slow moment of the link (another
    // process's copies, a power state) lands on all three alike instead of on one of them.
    // Streams created with the default flag wait for the legacy default stream and it waits for
    // them, so the timer's events on it bracket both copies.
    tutorial::EventTimer timer;
    const auto timed = [&](const auto& enqueue) {
        timer.start();
        enqueue();
        timer.stop();
        return timer.elapsed_ms();
    };
    std::vector<double> up_ms, down_ms, both_ms;
    constexpr int warmup_rounds = 2;
    constexpr int rounds = 9;
    for (int round = 0; round < warmup_rounds + rounds; ++round) {
        const double u = timed([&] { upload(t); });
        const double d = timed([&] { download(t); });
        const double b = timed([&] {
            upload(t);
            download(t);
        });
        if (round < warmup_rounds) continue;
        up_ms.push_back(u);
        down_ms.push_back(d);
        both_ms.push_back(b);
    }
    free_two_ways(t);
    const double share =
        tutorial::median(both_ms) / (tutorial::median(up_ms) + tutorial::median(down_ms));
    const bool overlapped = share < 0.75;
    return {overlapped == (engines >= 2),
            format("both took %.0f%% of one after the other", 100.0 * share)};
}

}  // namespace

tutorial::Result run_properties(tutorial::Context& ctx) {
    const HostMemoryProperties p = host_memory_properties(ctx.device);
    const Tried mapped = try_mapped_memory(p.can_map_host_memory);
    const Tried registered = try_registration(p.host_register_supported, cudaHostRegisterDefault);
    const Tried read_only =
        try_registration(p.host_register_read_only_supported, cudaHostRegisterReadOnly);
    // Under compute-sanitizer the timing is not judged, so a small copy is enough there.
    const Tried engines = try_copy_engines(
        p.async_engine_count, !tutorial::why_timing_not_judged().empty() ? (std::size_t{1} << 20)
                                                                         : (std::size_t{64} << 20));
    const std::vector<Prediction> predictions = {
        {"canMapHostMemory", p.can_map_host_memory,
         p.can_map_host_memory ? "a kernel writes through a mapped host pointer"
                               : "cudaHostGetDevicePointer refuses mapped host memory",
         mapped.came_true, mapped.seen, tutorial::Evidence::documented,
         "Runtime API reference: cudaDeviceAttr (cudaDevAttrCanMapHostMemory); cudaHostAlloc"},
        {"hostRegisterSupported", p.host_register_supported,
         p.host_register_supported ? "malloc memory can be pinned this way"
                                   : "this registration is refused",
         registered.came_true, registered.seen, tutorial::Evidence::documented,
         "Runtime API reference: cudaHostRegister (supported where "
         "cudaDevAttrHostRegisterSupported is not 0)"},
        {"hostRegisterReadOnlySupported", p.host_register_read_only_supported,
         p.host_register_read_only_supported ? "malloc memory can be pinned this way"
                                             : "this registration is refused",
         read_only.came_true, read_only.seen, tutorial::Evidence::documented,
         "Runtime API reference: cudaHostRegister (cudaHostRegisterReadOnly needs "
         "cudaDevAttrHostRegisterReadOnlySupported, else cudaErrorNotSupported)"},
        // A measured prediction: the overlap is timed, and not judged under compute-sanitizer.
        {"asyncEngineCount", p.async_engine_count,
         p.async_engine_count >= 2 ? "an upload and a download overlap in time"
                                   : "an upload and a download take turns",
         engines.came_true, engines.seen, tutorial::Evidence::timing, ""},
    };
    return tutorial::check_predictions(
        ctx, predictions,
        p.integrated
            ? "integrated = 1: the GPU shares the CPU's DRAM, so no PCIe link lies in between."
            : "integrated = 0: host memory is on the other side of a PCIe (or NVLink) link.");
}

TUTORIAL_SECTION(properties, run_properties);
