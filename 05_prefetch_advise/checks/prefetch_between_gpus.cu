// Checks of section prefetch_between_gpus: ../prefetch_between_gpus.cu's prefetch GPU 0 -> GPU 1
// -> GPU 0, timed by events, set against the peer copy of device memory between the same GPUs
// (the fastest way to move the bytes) and the pinned upload (what a trip through host memory
// would allow at best); a kernel checks the data after each move.
#include "05_prefetch_advise/prefetch_between_gpus.cu"

#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;

namespace {

struct PrefetchRates {
    double to_1_ms = 0, to_0_ms = 0;  // median prefetch GPU 0 -> GPU 1 and back
    double peer_ms = 0;               // cudaMemcpyPeerAsync GPU 0 -> GPU 1, peer access on
    double upload_ms = 0;             // cudaMemcpyAsync pinned host -> GPU 1
    int named = 0, prefetches = 0;    // prefetches LastPrefetchLocation named right away
    std::size_t wrong = 0;            // values wrong where the data arrived
};

// One prefetch to `to` on the legacy stream of `to`, timed by events there.
double timed_prefetch(std::uint32_t* data, std::size_t bytes, int to, PrefetchRates& r) {
    CUDA_CHECK(cudaSetDevice(to));
    tutorial::EventTimer timer;
    timer.start();
    prefetch_to_gpu(data, bytes, to);
    timer.stop();
    const double ms = timer.elapsed_ms();
    r.named += last_prefetch_location(data, bytes) == to;
    ++r.prefetches;
    return ms;
}

void measure_prefetches(std::size_t count, int runs, PrefetchRates& r) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    fill_on_host(data, count, seed);
    timed_prefetch(data, bytes, 0, r);  // from the host, once: it starts on GPU 0
    std::vector<double> to_1, to_0;
    for (int i = 0; i < runs + 1; ++i) {  // the first round warms up
        const double a = timed_prefetch(data, bytes, 1, r);
        CUDA_CHECK(cudaSetDevice(1));
        r.wrong += mismatches_on_device(data, count, seed);
        const double b = timed_prefetch(data, bytes, 0, r);
        r.wrong += mismatches_on_device(data, count, seed);
        if (i > 0) {
            to_1.push_back(a);
            to_0.push_back(b);
        }
    }
    r.to_1_ms = tutorial::median(to_1);
    r.to_0_ms = tutorial::median(to_0);
    CUDA_CHECK(cudaFree(data));
}

// The same bytes as plain device memory: a peer copy GPU 0 -> GPU 1, and an upload to GPU 1.
void measure_copies(std::size_t count, int runs, PrefetchRates& r) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    const Baselines b = allocate_baselines(count);
    r.peer_ms = tutorial::median_event_ms(1, runs, [&] { peer_copy(b, bytes); });
    r.wrong += mismatches_on_device(b.on_1, count, seed);
    r.upload_ms = tutorial::median_event_ms(1, runs, [&] { upload(b, bytes); });
    free_baselines(b);
}

// Why the speed claims cannot be judged, or "" when they can. They were set on GPUs joined by
// NVLink, where a move between GPUs need not cross PCIe at all; over PCIe peer-to-peer the
// prefetch and the upload share the same kind of link and the ratios mean nothing. The CUDA
// runtime does not say what joins two GPUs, so the peer copy's measured rate tells: faster than
// GPU 0's PCIe link can carry (as Linux reports it), or, where that cannot be read, faster than
// twice the pinned upload, is a link other than PCIe.
std::string why_no_nvlink(double peer_gbps, double upload_gbps) {
    std::string link;
    const double pcie_gbps = tutorial::pcie_link_gbps(0, &link);
    if (pcie_gbps > 0) {
        if (peer_gbps > pcie_gbps) return "";
        return format(
            "the peer copy (%.1f GB/s) ran no faster than GPU 0's PCIe link (%s, %.1f "
            "GB/s): no NVLink between these GPUs, so the prefetch crosses PCIe like "
            "the upload",
            peer_gbps, link.c_str(), pcie_gbps);
    }
    if (peer_gbps > 2 * upload_gbps) return "";
    return format(
        "the peer copy (%.1f GB/s) ran less than twice as fast as the pinned upload "
        "(%.1f GB/s): no NVLink between these GPUs, so the prefetch crosses PCIe like "
        "the upload",
        peer_gbps, upload_gbps);
}

}  // namespace

tutorial::Result run_prefetch_between_gpus(tutorial::Context& ctx) {
    const int gpus = tutorial::device_count();
    if (gpus < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", gpus));
    // Without peer access, enabling it (or a peer read) would stop the run: say why instead.
    const std::string no_peer = tutorial::why_no_peer_access(gpus);
    if (!no_peer.empty()) return ctx.skip(no_peer);
    for (int g : {0, 1}) {
        if (const char* why = why_no_gpu_prefetch(g); *why) return ctx.skip(why);
    }
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (256 << 20) : (512 << 20));
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const int runs = ctx.iters_or(ctx.quick() ? 5 : 7);
    std::printf(
        "%s of managed memory, prefetched GPU 0 -> GPU 1 -> GPU 0, %d times (medians, after one\n"
        "warm-up round; a kernel checks the data after each move). Beside it, the same bytes as\n"
        "device memory: cudaMemcpyPeerAsync GPU 0 -> GPU 1 with peer access, and a pinned upload\n"
        "to GPU 1.\n\n",
        tutorial::format_bytes(bytes).c_str(), runs);
    PrefetchRates r;
    measure_prefetches(count, runs, r);
    measure_copies(count, runs, r);
    CUDA_CHECK(cudaSetDevice(ctx.device));
    const double to_1 = tutorial::gb_per_s(bytes, r.to_1_ms);
    const double to_0 = tutorial::gb_per_s(bytes, r.to_0_ms);
    const double peer = tutorial::gb_per_s(bytes, r.peer_ms);
    const double upload = tutorial::gb_per_s(bytes, r.upload_ms);
    tutorial::Table table(
        {{"move"}, {"GB/s", tutorial::Align::right}, {"of the peer copy", tutorial::Align::right}});
    table.add_row({"cudaMemPrefetchAsync GPU 0 -> GPU 1", format("%.1f", to_1),
                   format("%.0f%%", 100 * to_1 / peer)});
    table.add_row({"cudaMemPrefetchAsync GPU 1 -> GPU 0", format("%.1f", to_0),
                   format("%.0f%%", 100 * to_0 / peer)});
    table.add_row({"cudaMemcpyPeerAsync GPU 0 -> GPU 1", format("%.1f", peer), "100%"});
    table.add_row({"cudaMemcpyAsync pinned host -> GPU 1", format("%.1f", upload),
                   format("%.0f%%", 100 * upload / peer)});
    table.print();
    const std::string no_nvlink = why_no_nvlink(peer, upload);
    std::printf(
        "\nThe Runtime API reference promises where the pages go, not how fast. Measured here:\n"
        "%s\n\n",
        no_nvlink.empty()
            ? "the GPUs are joined by a link faster than PCIe (NVLink), and the prefetch ran\n"
              "faster than any trip through host memory could, yet well below a peer copy of\n"
              "device memory: the driver moves managed pages with its own bookkeeping (observed\n"
              "on this driver; how it moves them, the reference does not say)."
            : "the GPUs are not joined by NVLink, so a prefetch between them and an upload from\n"
              "the host cross the same kind of link: the speed claims below are shown, not\n"
              "judged.");
    ctx.claim(tutorial::documented(
        "LastPrefetchLocation names the destination after every prefetch", r.named == r.prefetches,
        format("%d of %d prefetches", r.named, r.prefetches),
        "the attribute named another place than the last one asked for",
        "Runtime API reference: cudaMemRangeGetAttribute"));
    // Through host memory the pages would cross PCIe twice, so they could not even match the
    // upload; 2.2x to 2.4x in full runs, down to 1.49x in one quick run of 64 MiB. Over PCIe
    // peer-to-peer the prefetch crosses PCIe once, like the upload: not judged there.
    ctx.claim(tutorial::at_least(
                  "a prefetch between GPUs does not go through the host: it beats a pinned upload "
                  "(slower direction / upload)",
                  std::min(to_1, to_0) / upload, 1.2, "x", "the pages were staged in host memory"),
              no_nvlink);
    ctx.claim(tutorial::at_least(
                  "...yet stays well below a peer copy of device memory, at most two thirds of its "
                  "rate (peer copy / slower direction)",
                  peer / std::min(to_1, to_0), 1.5, "x",
                  "the peer copy ran slower than it can: other work on the link"),
              no_nvlink);
    return ctx.verdict(r.wrong == 0, format("the data was intact after every move: %zu values "
                                            "wrong",
                                            r.wrong));
}

TUTORIAL_SECTION(prefetch_between_gpus, run_prefetch_between_gpus);
