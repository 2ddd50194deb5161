// Checks of section peer_bandwidth: runs ../peer_bandwidth.cu's walkthrough, which times the copies
// for every ordered pair of GPUs with and without peer access and checks that every copy arrived;
// prints the matrices and judges them against each other and the NVLink limit, where NVML says
// the GPUs are joined by NVLink.
#include "01_uva/peer_bandwidth.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

using tutorial::format;

namespace {

// NVLink's limit one way, for the GPUs whose links this program knows: an H100 or H200 SXM has 18
// NVLink 4 links, each 26.5625 GB/s one way as `nvidia-smi nvlink --status` reports it (the line
// rate). NVIDIA's published figure, 900 GB/s both ways or 450 GB/s one way, counts 25 GB/s a
// link. The program takes the larger line rate, so its percentages are the stricter ones: a
// copy at 70% of 478 GB/s is 74% of 450. 0 where the GPU is another model.
double nvlink_limit_gbps(int device) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    const std::string name = prop.name;
    const bool sxm =
        (name.find("H100") != std::string::npos || name.find("H200") != std::string::npos) &&
        name.find("PCIe") == std::string::npos && name.find("NVL") == std::string::npos;
    return sxm ? 18 * 26.5625 : 0.0;
}

// Whether NVML (libnvidia-ml, the library nvidia-smi reads the links with; it comes with the
// driver) reports an NVLink between GPUs a and b: "" when it does, else why not, for the claims
// that only NVLink carries. Loaded at run time, so that the chapter builds without its headers;
// the few declarations below are NVML's (nvml.h): nvmlReturn_t 0 is NVML_SUCCESS, P2P caps index
// 2 is NVML_P2P_CAPS_INDEX_NVLINK, P2P status 0 is NVML_P2P_STATUS_OK.
std::string why_no_nvlink(int a, int b) {
    void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (nvml == nullptr)
        return "NVML (libnvidia-ml.so.1) could not be loaded, so the link between the GPUs is "
               "not known here";
    using Init = int (*)();
    using ByBusId = int (*)(const char*, void**);
    using P2PStatus = int (*)(void*, void*, int, int*);
    const auto init = reinterpret_cast<Init>(dlsym(nvml, "nvmlInit_v2"));
    const auto shutdown = reinterpret_cast<Init>(dlsym(nvml, "nvmlShutdown"));
    const auto by_bus_id =
        reinterpret_cast<ByBusId>(dlsym(nvml, "nvmlDeviceGetHandleByPciBusId_v2"));
    const auto p2p_status = reinterpret_cast<P2PStatus>(dlsym(nvml, "nvmlDeviceGetP2PStatus"));
    std::string why;
    if (init == nullptr || shutdown == nullptr || by_bus_id == nullptr || p2p_status == nullptr ||
        init() != 0) {
        why = "NVML could not be started, so the link between the GPUs is not known here";
    } else {
        char bus_a[32] = {};
        char bus_b[32] = {};
        CUDA_CHECK(cudaDeviceGetPCIBusId(bus_a, sizeof bus_a, a));
        CUDA_CHECK(cudaDeviceGetPCIBusId(bus_b, sizeof bus_b, b));
        void* device_a = nullptr;
        void* device_b = nullptr;
        int status = -1;
        if (by_bus_id(bus_a, &device_a) != 0 || by_bus_id(bus_b, &device_b) != 0 ||
            p2p_status(device_a, device_b, 2, &status) != 0) {
            why = format("NVML could not say how GPU %d and GPU %d are linked", a, b);
        } else if (status != 0) {
            why = format(
                "GPU %d and GPU %d are not joined by NVLink (NVML: P2P over NVLink "
                "status %d), and over PCIe how a peer copy compares with staging, both "
                "ways and with a kernel's reads depends on the switches and root ports "
                "between them",
                a, b, status);
        }
        shutdown();
    }
    dlclose(nvml);
    return why;
}

// "" when every pair of the first `gpus` GPUs is joined by NVLink, else why not (the first pair
// that is not).
std::string why_not_all_nvlink(int gpus) {
    for (int a = 0; a < gpus; ++a) {
        for (int b = a + 1; b < gpus; ++b) {
            const std::string why = why_no_nvlink(a, b);
            if (!why.empty()) return why;
        }
    }
    return "";
}

// A matrix with a row per sending GPU and a column per receiving one; `name` names its CSV file.
void print_matrix(const char* name, const char* title, const Found& r, int gpus,
                  double PairRates::*value, const char* cell_format, double limit) {
    std::printf("%s\n", title);
    std::vector<tutorial::Column> columns = {{"from \\ to"}};
    for (int g = 0; g < gpus; ++g) columns.push_back({format("GPU %d", g), tutorial::Align::right});
    tutorial::Table table(columns);
    table.named(name);
    for (int from = 0; from < gpus; ++from) {
        std::vector<std::string> row = {format("GPU %d", from)};
        for (int to = 0; to < gpus; ++to) row.push_back("-");
        for (const PairRates& p : r.pairs) {
            if (p.from != from) continue;
            const double v = p.*value;
            row[1 + p.to] =
                format(cell_format, v) + (limit > 0 ? format(" (%.0f%%)", 100.0 * v / limit) : "");
        }
        table.add_row(row);
    }
    table.print();
    std::printf("\n");
}

template <typename Ratio>
double smallest(const Found& r, Ratio ratio) {
    double least = 1e300;
    for (const PairRates& p : r.pairs) least = std::min(least, ratio(p));
    return least;
}

tutorial::Result report_peer_bandwidth(tutorial::Context& ctx, const Found& r, int gpus,
                                       double limit, const std::string& no_nvlink,
                                       const std::function<Found()>& again) {
    std::printf(
        "Without peer access the runtime copies through a staging buffer in host memory, over\n"
        "PCIe twice; with it, the sending GPU's copy engine writes into the peer's memory over\n"
        "the link between them. Over NVLink, both directions at once use separate lanes, so\n"
        "they add up, and a kernel reading a peer's memory in place goes over the same links.\n"
        "These rates are NVLink's lessons: %s.\n\n",
        no_nvlink.empty() ? "every pair here is joined by NVLink (NVML), so they are judged"
                          : "not judged here, where a pair is not joined by NVLink");
    const auto peer_vs_staged = [](const PairRates& p) { return p.peer / p.staged; };
    const auto both_vs_one = [](const PairRates& p) { return p.peer_both / p.peer; };
    const auto kernel_vs_copy = [](const PairRates& p) { return p.kernel / p.peer; };
    const auto near_limit = [&](const Found& m) {
        return limit > 0 ? 100.0 * smallest(m, [](const PairRates& p) { return p.peer; }) / limit
                         : 0.0;
    };
    ctx.claim(tutorial::at_least(
                  "peer_beats_staging",
                  "peer access makes GPU-to-GPU copies much faster than host staging (slowest "
                  "pair, with / without)",
                  smallest(r, peer_vs_staged), 4.0, "x",
                  "the copies with peer access were not sent over NVLink, although NVML says "
                  "these GPUs are joined by it")
                  .again([&] { return smallest(again(), peer_vs_staged); }),
              no_nvlink);
    ctx.claim(tutorial::at_least("near_nvlink_limit",
                                 "one-way peer copies come close to the NVLink limit "
                                 "(slowest pair, percent of the limit)",
                                 near_limit(r), 70.0, "%",
                                 "a pair with fewer links, or other work on the GPUs")
                  .again([&] { return near_limit(again()); }),
              !no_nvlink.empty() ? no_nvlink
              : limit <= 0       ? "this program does not know this GPU model's NVLink limit"
              : gpus > 2
                  ? "with more than 2 GPUs a board may split its links among the peers (without "
                    "an NVSwitch), and the CUDA runtime cannot count the links of a pair"
                  : "");
    ctx.claim(tutorial::at_least("both_ways_double",
                                 "both directions at once carry nearly twice one direction "
                                 "(slowest pair, both / one)",
                                 smallest(r, both_vs_one), 1.8, "x",
                                 "the two directions share a link or a copy engine")
                  .again([&] { return smallest(again(), both_vs_one); }),
              no_nvlink);
    ctx.claim(tutorial::at_least("kernel_reads_near_copy",
                                 "a kernel reading a peer's memory in place gets most of a "
                                 "copy's rate (slowest pair, kernel / copy)",
                                 smallest(r, kernel_vs_copy), 0.5, "x",
                                 "the kernel's reads do not keep enough requests in flight over "
                                 "the link")
                  .again([&] { return smallest(again(), kernel_vs_copy); }),
              no_nvlink);
    return ctx.verdict(r.wrong == 0 && r.timed_out == 0,
                       format("every copy arrived intact, %zu values wrong; %d holds timed out",
                              r.wrong, r.timed_out));
}

}  // namespace

tutorial::Result run_peer_bandwidth(tutorial::Context& ctx) {
    const int gpus = tutorial::device_count();
    if (gpus < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", gpus));
    // Without peer access, enabling it (or a peer read) would stop the run: say why instead.
    const std::string no_peer = tutorial::why_no_peer_access(gpus);
    if (!no_peer.empty()) return ctx.skip(no_peer);
    const std::size_t bytes = ctx.quick() ? (64 << 20) : (256 << 20);
    const int copies = ctx.quick() ? 4 : 8;
    const int runs = ctx.quick() ? 5 : 7;
    // The NVLink limit where NVML says every pair is joined by NVLink and the model is known.
    const std::string no_nvlink = why_not_all_nvlink(gpus);
    const double limit = no_nvlink.empty() ? nvlink_limit_gbps(ctx.device) : 0.0;
    // Under compute-sanitizer, which may wait for each kernel before the next call returns, a
    // hold would wait for a release the host cannot give: the copies are not held there.
    const bool hold_streams = tutorial::why_timing_not_judged().empty();
    std::printf(
        "%d GPUs; %s buffers. Each copy is cudaMemcpyPeerAsync on a stream of the sending GPU,\n"
        "%d back to back, %s; medians of %d runs.\n"
        "NVLink limit one way: %s.\n\n",
        gpus, tutorial::format_bytes(bytes).c_str(), copies,
        hold_streams ? "held behind a waiting kernel until all are queued"
                     : "not held (under compute-sanitizer)",
        runs,
        limit > 0           ? "18 links x 26.5625 GB/s = 478 GB/s (H100/H200 SXM: the line rate\n"
                              "nvidia-smi nvlink --status shows per link; NVIDIA's published 450 GB/s\n"
                              "counts 25 GB/s a link, so the percentages here are of the higher ceiling)"
        : no_nvlink.empty() ? "not known for this GPU model (no percentages)"
                            : "none: the GPUs are not all joined by NVLink (no percentages)");
    const Found r = walkthrough(gpus, bytes, copies, runs, hold_streams);
    print_matrix("one_way_staged",
                 "One way, GB/s, without peer access (staged through host memory):", r, gpus,
                 &PairRates::staged, "%.1f", 0);
    print_matrix("one_way_peer",
                 "One way, GB/s, with peer access (percent of the NVLink limit):", r, gpus,
                 &PairRates::peer, "%.1f", limit);
    print_matrix("both_ways_staged", "Both ways at once, GB/s in total, without peer access:", r,
                 gpus, &PairRates::staged_both, "%.1f", 0);
    print_matrix("both_ways_peer",
                 "Both ways at once, GB/s in total, with peer access (percent of twice the limit):",
                 r, gpus, &PairRates::peer_both, "%.1f", 2 * limit);
    print_matrix("latency_us",
                 "Latency: microseconds per 4-byte copy, back to back, with peer access:", r, gpus,
                 &PairRates::small_us, "%.2f", 0);
    print_matrix("kernel_reads",
                 "A kernel on the row's GPU adding up the column's GPU memory in place, GB/s:", r,
                 gpus, &PairRates::kernel, "%.1f", limit);
    // A claim that falls short is measured again: every pair timed afresh.
    return report_peer_bandwidth(ctx, r, gpus, limit, no_nvlink, [&] {
        return walkthrough(gpus, bytes, copies, runs, hold_streams);
    });
}

TUTORIAL_SECTION(peer_bandwidth, run_peer_bandwidth);
