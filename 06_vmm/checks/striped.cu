// Checks of section striped: builds the stripe of ../striped.cu over every GPU, asks
// cudaPointerGetAttributes where each chunk lives, and times each GPU writing its own chunk, the
// next GPU's and the whole range, which the next GPU checks.
#include "06_vmm/striped.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <string>

using tutorial::format;

namespace {

constexpr std::uint32_t seed = 53;

struct WriterResult {
    double whole_ms = 0;    // a kernel on this GPU filling the whole range
    double own_ms = 0;      // ...only its own chunk (median)
    double peer_ms = 0;     // ...only the next GPU's chunk (median)
    std::size_t wrong = 0;  // after the whole fill, checked by a kernel on the next GPU
};

WriterResult write_from(const Stripe& s, int writer, int runs) {
    WriterResult w;
    const int next = (writer + 1) % s.gpus;
    const std::size_t per_chunk = s.chunk / sizeof(std::uint32_t);
    CUDA_CHECK(cudaSetDevice(writer));
    w.own_ms = tutorial::median_event_ms(1, runs, [&] {
        fill_on_device_async(s.data() + writer * per_chunk, per_chunk, seed, nullptr);
    });
    w.peer_ms = tutorial::median_event_ms(1, runs, [&] {
        fill_on_device_async(s.data() + next * per_chunk, per_chunk, seed, nullptr);
    });
    w.whole_ms = tutorial::median_event_ms(
        0, 1, [&] { fill_on_device_async(s.data(), s.count(), seed + writer, nullptr); });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaSetDevice(next));
    w.wrong = mismatches_on_device(s.data(), s.count(), seed + writer);
    return w;
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
    const int runs = ctx.quick() ? 3 : 7;
    const Stripe s = make_stripe(gpus, ctx.quick() ? (16 << 20) : (256 << 20));
    std::printf(
        "One range of %s at 0x%llx: %d chunks of %s, chunk g created on GPU g with cuMemCreate\n"
        "and mapped at offset g x %s; one cuMemSetAccess grants all %d GPUs the whole range.\n\n",
        tutorial::format_bytes(s.chunk * gpus).c_str(), static_cast<unsigned long long>(s.address),
        gpus, tutorial::format_bytes(s.chunk).c_str(), tutorial::format_bytes(s.chunk).c_str(),
        gpus);
    tutorial::Table owners(
        {{"chunk"}, {"first byte"}, {"cudaPointerGetAttributes: device"}, {"last byte: device"}});
    int owners_right = 0;
    for (int g = 0; g < gpus; ++g) {
        const CUdeviceptr first = s.address + g * s.chunk;
        const int a = owner_of(first);
        const int b = owner_of(first + s.chunk - 1);
        owners_right += a == g && b == g;
        owners.add_row({format("%d", g), format("0x%llx", static_cast<unsigned long long>(first)),
                        format("%d", a), format("%d", b)});
    }
    owners.print();

    std::printf(
        "\nEvery GPU in turn: a kernel fills its own chunk, the next GPU's chunk, then the\n"
        "whole range, which a kernel on the next GPU checks.\n\n");
    tutorial::Table table({{"writer"},
                           {"own chunk GB/s", tutorial::Align::right},
                           {"next GPU's chunk GB/s", tutorial::Align::right},
                           {"whole range GB/s", tutorial::Align::right},
                           {"checked by the next GPU"}});
    double smallest_ratio = 1e300;
    std::size_t wrong = 0;
    for (int w = 0; w < gpus; ++w) {
        const WriterResult r = write_from(s, w, runs);
        wrong += r.wrong;
        smallest_ratio = std::min(smallest_ratio, r.peer_ms / r.own_ms);
        table.add_row({format("GPU %d", w), format("%.1f", tutorial::gb_per_s(s.chunk, r.own_ms)),
                       format("%.1f", tutorial::gb_per_s(s.chunk, r.peer_ms)),
                       format("%.1f", tutorial::gb_per_s(s.chunk * gpus, r.whole_ms)),
                       format("%zu wrong", r.wrong)});
    }
    table.print();
    CUDA_CHECK(cudaSetDevice(ctx.device));
    free_stripe(s);
    std::printf(
        "\nOne pointer, one kernel, memory on %d GPUs: the addresses say nothing about where the\n"
        "bytes are, the mappings do. A kernel writes its own GPU's chunk at device-memory speed\n"
        "and the others' over NVLink.\n\n",
        gpus);
    ctx.claim(
        tutorial::documented("cudaPointerGetAttributes names each chunk's GPU, first byte and last",
                             owners_right == gpus, format("%d of %d chunks", owners_right, gpus),
                             "the chunks were not mapped where they were created",
                             "Runtime API reference: cudaPointerGetAttributes"));
    ctx.claim(tutorial::at_least(
        "a kernel writes its own GPU's chunk much faster than a peer's (slowest writer, peer / "
        "own time)",
        smallest_ratio, 2.0, "x", "the chunks are not where cudaPointerGetAttributes says"));
    return ctx.verdict(wrong == 0 && owners_right == gpus,
                       format("every GPU wrote the whole range and the next GPU read it back: "
                              "%zu values wrong",
                              wrong));
}

TUTORIAL_SECTION(striped, run_striped);
