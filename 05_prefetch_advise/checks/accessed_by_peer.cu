// Checks of section accessed_by_peer: runs ../accessed_by_peer.cu's walkthrough round after round
// and times GPU 0's two reads of the data on GPU 1 and GPU 1's read after them, without and with
// the advice (by events), and whether the AccessedBy attribute listed GPU 0.
#include "05_prefetch_advise/accessed_by_peer.cu"

#include "../helpers/counted.hpp"
#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/text.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <functional>
#include <string>

using tutorial::format;

namespace {

// Medians over the rounds, by events: [advise][first, second, owner].
struct Medians {
    double ms[2][3] = {};
};

Medians time_rounds(std::size_t bytes, int runs, Found& found) {
    tutorial::StepTimes times;
    for (int r = 0; r < runs; ++r) {
        const Found f = walkthrough(bytes);
        found.wrong += f.wrong;
        found.listed[0] = f.listed[0];
        found.listed[1] = f.listed[1];
    }
    Medians m;
    for (int advise = 0; advise < 2; ++advise) {
        for (int read = 0; read < 3; ++read) {
            m.ms[advise][read] = times.median_ms(reads[advise][read]);
        }
    }
    return m;
}

// AccessedBy also opts the pages into migrations driven by the GPU's access counters (the
// Programming Guide, N.1.8): where those are on, a correct driver may move hot pages to GPU 0
// although the advice holds, and "the data stays on GPU 1" cannot be judged. The driver's
// counters tell what moved during GPU 0's two advised reads (one more walkthrough, counted, at
// most 64 MiB); where they cannot be read, a second advised read over twice as fast as the first
// says the pages came over. Returns why the claim is not judged, or "".
std::string why_pages_moved(std::size_t bytes, const Medians& m, Found& found) {
    const std::size_t counted = counted_bytes(bytes);
    tutorial::UmCounters counters;
    if (!counters.available()) {
        if (m.ms[1][0] <= 2.0 * m.ms[1][1]) return "";
        return format("GPU 0's second advised read took %.3f ms against %.3f ms for its first: "
                      "the pages came over to it (access counters, N.1.8; the Unified Memory "
                      "counters cannot be read here: %s)",
                      m.ms[1][1], m.ms[1][0], counters.why_not().c_str());
    }
    tutorial::StepTraffic traffic(counters);
    found.wrong += walkthrough(counted).wrong;
    print_traffic(counters, traffic, tutorial::format_bytes(counted));
    std::uint64_t moved = 0;
    for (int read = 0; read < 2; ++read) {
        const tutorial::UmTraffic& t = traffic.of(reads[1][read]);
        moved += t.dtod.total + t.htod.total;
    }
    if (moved * 10 <= counted) return "";
    return format("the counters saw %.1f MiB of the %s move to GPU 0 during its advised reads "
                  "(access counters, N.1.8: where they are on, hot pages move despite the advice)",
                  mib_of(moved), tutorial::format_bytes(counted).c_str());
}

// The timing claims, each measured again with fresh rounds where it falls short.
void claim_times(tutorial::Context& ctx, const Medians& m, std::size_t bytes,
                 const std::string& pages_moved, const std::function<Medians()>& again) {
    // These claims measure pages moving on access, which hardware-coherent systems may skip.
    const std::string coherent = tutorial::why_hardware_coherent(0);
    const std::string small = tutorial::why_too_small(
        bytes, std::size_t{4} << 20, "a read of a few pages is mostly launch and fault overhead");
    const std::string not_judged = coherent.empty() ? small : coherent;
    ctx.claim(tutorial::at_least("mapped_beats_faults",
                                 "with AccessedBy, GPU 0's first read beats the faulting read "
                                 "(without / with)",
                                 m.ms[0][0] / m.ms[1][0], 1.5, "x",
                                 "the faults were as cheap as mapped reads, or the mapping was "
                                 "built on first touch")
                  .again([&] {
                      const Medians n = again();
                      return n.ms[0][0] / n.ms[1][0];
                  }),
              not_judged);
    ctx.claim(tutorial::at_least("faults_move_data",
                                 "without advice GPU 0's first read moves the data over, so its "
                                 "second is much faster (first / second)",
                                 m.ms[0][0] / m.ms[0][1], 3.0, "x",
                                 "the driver mapped the pages remotely instead of migrating them")
                  .again([&] {
                      const Medians n = again();
                      return n.ms[0][0] / n.ms[0][1];
                  }),
              not_judged);
    ctx.claim(tutorial::at_least("data_stays_on_owner",
                                 "with AccessedBy the pages stay on GPU 1, and its later read is "
                                 "much faster (without / with)",
                                 m.ms[0][2] / m.ms[1][2], 3.0, "x",
                                 "the pages migrated to GPU 0 despite the advice")
                  .again([&] {
                      const Medians n = again();
                      return n.ms[0][2] / n.ms[1][2];
                  }),
              not_judged.empty() ? pages_moved : not_judged);
}

}  // namespace

tutorial::Result run_accessed_by_peer(tutorial::Context& ctx) {
    const int gpus = tutorial::device_count();
    if (gpus < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", gpus));
    // Without peer access, enabling it (or a peer read) would stop the run: say why instead.
    const std::string no_peer = tutorial::why_no_peer_access(gpus);
    if (!no_peer.empty()) return ctx.skip(no_peer);
    for (int g : {reader, owner}) {
        if (const char* why = why_no_gpu_prefetch(g); *why) return ctx.skip(why);
    }
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (64 << 20) : (256 << 20));
    const int runs = ctx.quick() ? 1 : 3;
    std::printf(
        "%s of managed memory, prefetched to GPU %d. A kernel on GPU %d adds it all up twice, "
        "then\n"
        "a kernel on GPU %d adds it up. Once without advice, once after\n"
        "cudaMemAdvise(data, n, cudaMemAdviseSetAccessedBy, GPU %d).\n\n",
        tutorial::format_bytes(bytes).c_str(), owner, reader, owner, reader);
    Found found;
    found.wrong += walkthrough(bytes < (1 << 20) ? bytes : (1 << 20)).wrong;  // warm-up
    const Medians m = time_rounds(bytes, runs, found);
    CUDA_CHECK(cudaSetDevice(ctx.device));

    tutorial::Table table({{"advice"},
                           {"GPU 0 first read, GB/s", tutorial::Align::right},
                           {"GPU 0 second read, GB/s", tutorial::Align::right},
                           {"then GPU 1 reads, GB/s", tutorial::Align::right}});
    for (int advise = 0; advise < 2; ++advise) {
        table.add_row({advise ? "AccessedBy(GPU 0)" : "none",
                       format("%.1f", tutorial::gb_per_s(bytes, m.ms[advise][0])),
                       format("%.1f", tutorial::gb_per_s(bytes, m.ms[advise][1])),
                       format("%.1f", tutorial::gb_per_s(bytes, m.ms[advise][2]))});
    }
    table.print();
    std::printf(
        "\nWithout advice GPU 0's first read faults and migrates every page to GPU 0; its second\n"
        "read is local, and GPU 1 must fault the pages back. With AccessedBy, GPU 0's page\n"
        "tables point at GPU 1's memory (the cudaMemAdvise entry: the advice moves nothing and\n"
        "keeps a mapping): both reads go over the link between the GPUs and the data stays on\n"
        "GPU 1, which then reads it at device speed, unless the GPU's access counters move hot\n"
        "pages (N.1.8), which the counted walkthrough below shows.\n\n");
    // The cudaMemRangeGetAttribute entry: the ids of the devices that have AccessedBy set on the
    // whole range.
    ctx.claim(tutorial::documented(
        "reader_listed",
        "cudaMemRangeGetAttribute(AccessedBy) lists GPU 0 exactly where it was advised",
        found.listed[1] && !found.listed[0],
        format("%s with the advice, %s without", found.listed[1] ? "listed" : "not listed",
               found.listed[0] ? "listed" : "not listed"),
        "the advice was not recorded for the range",
        tutorial::Entry{"Runtime API reference: cudaMemRangeGetAttribute",
                        "cudaMemAdviceSetAccessedBy", "will"}));
    const std::string pages_moved = why_pages_moved(bytes, m, found);
    CUDA_CHECK(cudaSetDevice(ctx.device));
    claim_times(ctx, m, bytes, pages_moved, [&] { return time_rounds(bytes, runs, found); });
    CUDA_CHECK(cudaSetDevice(ctx.device));
    return ctx.verdict(found.wrong == 0,
                       "every read returned the data's sum, with and without the advice");
}

TUTORIAL_SECTION(accessed_by_peer, run_accessed_by_peer);
