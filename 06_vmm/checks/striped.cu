// Checks of section striped: runs the walkthrough of ../striped.cu over every GPU, round after
// round, times each writer's three kernels with events on its own GPU, and judges where each
// chunk lives and what its own GPU's memory is worth.
#include "06_vmm/striped.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <string>

using tutorial::format;

namespace {

// Per writer, the median over `rounds` walkthroughs of each kernel's time (ms), and every value
// the next GPU found wrong.
struct Rounds {
    Found first;
    std::vector<double> own_ms, peer_ms, whole_ms;
    std::size_t wrong = 0;
};

Rounds run_rounds(int gpus, std::size_t chunk, int rounds) {
    tutorial::StepTimes times;
    Rounds r;
    for (int i = 0; i < rounds; ++i) {
        const Found f = walkthrough(gpus, chunk);
        for (const std::size_t w : f.wrong) r.wrong += w;
        if (i == 0) r.first = f;
    }
    const std::vector<double> own = times.ms(own_chunk);
    const std::vector<double> peer = times.ms(peer_chunk);
    const std::vector<double> whole = times.ms(whole_range);
    for (int w = 0; w < gpus; ++w) {
        std::vector<double> o, p, a;
        for (int i = 0; i < rounds; ++i) {
            o.push_back(own[i * gpus + w]);
            p.push_back(peer[i * gpus + w]);
            a.push_back(whole[i * gpus + w]);
        }
        r.own_ms.push_back(tutorial::median(o));
        r.peer_ms.push_back(tutorial::median(p));
        r.whole_ms.push_back(tutorial::median(a));
    }
    return r;
}

// The slowest writer's ratio: a peer's chunk against its own.
double smallest_ratio(const Rounds& r) {
    double smallest = 1e300;
    for (std::size_t w = 0; w < r.own_ms.size(); ++w)
        smallest = std::min(smallest, r.peer_ms[w] / r.own_ms[w]);
    return smallest;
}

}  // namespace

tutorial::Result run_striped(tutorial::Context& ctx) {
    const int gpus = tutorial::device_count();
    if (gpus < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", gpus));
    // Without peer access, enabling it (or a peer read) would stop the run: say why instead.
    const std::string no_peer = tutorial::why_no_peer_access(gpus);
    if (!no_peer.empty()) return ctx.skip(no_peer);
    for (int g = 0; g < gpus; ++g) {
        if (!tutorial::vmm_supported(g)) return ctx.skip("VMM is not supported on every GPU");
    }
    const int rounds = ctx.quick() ? 3 : 7;
    const std::size_t wanted = ctx.quick() ? (16 << 20) : (256 << 20);
    walkthrough(gpus, wanted);  // the warm-up round: each GPU loads the kernels
    const Rounds r = run_rounds(gpus, wanted, rounds);
    CUDA_CHECK(cudaSetDevice(ctx.device));
    const Found& f = r.first;
    std::printf(
        "One range of %s: %d chunks of %s, chunk g created on GPU g with cuMemCreate and mapped\n"
        "at offset g x %s; one cuMemSetAccess grants all %d GPUs the whole range.\n\n",
        tutorial::format_bytes(f.chunk * gpus).c_str(), gpus,
        tutorial::format_bytes(f.chunk).c_str(), tutorial::format_bytes(f.chunk).c_str(), gpus);
    tutorial::Table owners(
        {{"chunk"}, {"cudaPointerGetAttributes: device of its first byte"}, {"of its last byte"}});
    int owners_right = 0;
    for (int g = 0; g < gpus; ++g) {
        owners_right += f.first[g] == g && f.last[g] == g;
        owners.add_row({format("%d", g), format("%d", f.first[g]), format("%d", f.last[g])});
    }
    owners.print();
    std::printf(
        "\nEvery GPU in turn: a kernel fills its own chunk, the next GPU's chunk, then the\n"
        "whole range, which a kernel on the next GPU checks (medians of %d rounds).\n\n",
        rounds);
    tutorial::Table table({{"writer"},
                           {"own chunk GB/s", tutorial::Align::right},
                           {"next GPU's chunk GB/s", tutorial::Align::right},
                           {"whole range GB/s", tutorial::Align::right}});
    for (int w = 0; w < gpus; ++w) {
        table.add_row({format("GPU %d", w),
                       format("%.1f", tutorial::gb_per_s(f.chunk, r.own_ms[w])),
                       format("%.1f", tutorial::gb_per_s(f.chunk, r.peer_ms[w])),
                       format("%.1f", tutorial::gb_per_s(f.chunk * gpus, r.whole_ms[w]))});
    }
    table.print();
    std::printf(
        "\nOne pointer, one kernel, memory on %d GPUs: the addresses say nothing about where the\n"
        "bytes are, the mappings do. A kernel writes its own GPU's chunk at device-memory speed\n"
        "and the others' over the link between the GPUs. The next GPU found %zu values wrong.\n\n",
        gpus, r.wrong);
    ctx.claim(tutorial::documented(
        "chunk_owners_named",
        "cudaPointerGetAttributes names each chunk's GPU, first byte and last",
        owners_right == gpus, format("%d of %d chunks", owners_right, gpus),
        "the chunks were not mapped where they were created",
        tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes",
                        "cudaMemoryTypeDevice physically resides", "identifies"}));
    ctx.claim(tutorial::at_least("own_chunk_faster",
                                 "a kernel writes its own GPU's chunk much faster than a peer's "
                                 "(slowest writer, peer / own time)",
                                 smallest_ratio(r), 2.0, "x",
                                 "the chunks are not where cudaPointerGetAttributes says")
                  .again([&] { return smallest_ratio(run_rounds(gpus, wanted, rounds)); }));
    CUDA_CHECK(cudaSetDevice(ctx.device));
    return ctx.verdict(r.wrong == 0 && owners_right == gpus,
                       format("every GPU wrote the whole range and the next GPU read it back: "
                              "%zu values wrong",
                              r.wrong));
}

TUTORIAL_SECTION(striped, run_striped);
