// Checks of section portable_pinned: runs ../portable_pinned.cu's walkthrough, in which every GPU
// copies, reads and writes both buffers, and times its copies (the GPU-buffer pairs take turns in
// it). Prints the flags and a table, and judges whether Portable changed anything.
#include "01_uva/portable_pinned.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;

namespace {

// cudaHostGetFlags answers in cudaHostAlloc's flag values.
std::string flag_names(unsigned flags) {
    std::string text;
    if (flags & cudaHostAllocPortable) text += "Portable";
    if (flags & cudaHostAllocMapped) text += text.empty() ? "Mapped" : "|Mapped";
    if (flags & cudaHostAllocWriteCombined)
        text += text.empty() ? "WriteCombined" : "|WriteCombined";
    return text.empty() ? "Default" : text;
}

struct Use {
    int gpu;
    const char* buffer;
    double copy_gbps = 0;  // cudaMemcpyAsync host -> this GPU, from the buffer (median)
    double copy_low = 0, copy_high = 0;  // the slowest and fastest round
    std::size_t read_wrong = 0;          // a kernel on this GPU read the buffer through its pointer
    std::size_t written_wrong = 0;       // a kernel on this GPU wrote it; the CPU checked
};

struct PortableResult {
    Found found;            // the walkthrough: flags, and what each kernel read and wrote
    std::vector<Use> uses;  // GPU 0 Portable, GPU 0 Default, GPU 1 Portable, ...
};

// The walkthrough, its copies timed: each GPU-buffer pair's step over the rounds (median,
// slowest and fastest), four copies a step.
PortableResult measure_portable(int gpus, int home, std::size_t count, int rounds) {
    PortableResult r;
    const std::size_t bytes = count * sizeof(std::uint32_t);
    tutorial::StepTimes times;
    r.found = walkthrough(home, gpus, count, rounds);
    for (int g = 0; g < gpus; ++g) {
        for (int which = 0; which < 2; ++which) {
            const tutorial::Spread ms = tutorial::spread_of(times.ms(copies[g][which]));
            const InPlace& in_place = r.found.in_place[r.uses.size()];
            Use u{g, buffer_names[which]};
            u.copy_gbps = tutorial::gb_per_s(4 * bytes, ms.median);
            u.copy_low = tutorial::gb_per_s(4 * bytes, ms.high);
            u.copy_high = tutorial::gb_per_s(4 * bytes, ms.low);
            u.read_wrong = in_place.read_wrong;
            u.written_wrong = in_place.written_wrong;
            r.uses.push_back(u);
        }
    }
    return r;
}

// Each GPU's Default buffer against its Portable one: the same GPU and the same link, so the
// ratio shows the flag and nothing else (two GPUs may sit behind different links). The lowest of
// the GPUs.
double worst_default_vs_portable(const PortableResult& r) {
    double worst = 1e300;
    for (std::size_t i = 1; i < r.uses.size(); i += 2)
        worst = std::min(worst, r.uses[i].copy_gbps / r.uses[i - 1].copy_gbps);
    return worst;
}

// cudaHostGetFlags passes back, in pFlags, the flags the memory was allocated with.
const tutorial::Entry passes_back_flags{"Runtime API reference: cudaHostGetFlags",
                                        "flags cudaHostAlloc", "passes back"};

}  // namespace

tutorial::Result run_portable_pinned(tutorial::Context& ctx) {
    const int present = tutorial::device_count();
    if (present < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", present));
    const int gpus = std::min(present, most_gpus);  // the lesson's steps name its first 8 GPUs
    const std::size_t bytes = ctx.quick() ? (16 << 20) : (256 << 20);
    const int rounds = ctx.quick() ? 5 : 9;
    std::printf(
        "With GPU %d current, two %s buffers: cudaHostAlloc(&p, n, cudaHostAllocPortable) and\n"
        "cudaHostAlloc(&p, n, cudaHostAllocDefault). Every GPU copies each buffer to its own\n"
        "memory, the pairs taking turns for %d rounds (median, slowest and fastest round); then\n"
        "a kernel on each GPU reads each buffer through the host pointer and another writes it,\n"
        "which the CPU checks.\n\n",
        ctx.device, tutorial::format_bytes(bytes).c_str(), rounds);
    // A warm-up first, small and untimed: the first copies to a fresh buffer pay extra.
    (void)walkthrough(ctx.device, gpus, 1 << 18, 1);
    const PortableResult r = measure_portable(gpus, ctx.device, bytes / 4, rounds);
    std::printf(
        "cudaHostGetFlags: Portable buffer %s; Default buffer %s (%s with GPU %d current)\n\n",
        flag_names(r.found.flags[0]).c_str(), flag_names(r.found.flags[1]).c_str(),
        flag_names(r.found.default_elsewhere).c_str(), (ctx.device + 1) % gpus);

    tutorial::Table table({{"GPU"},
                           {"buffer"},
                           {"copy to the GPU, GB/s", tutorial::Align::right},
                           {"slowest - fastest", tutorial::Align::right},
                           {"kernel read in place"},
                           {"kernel wrote, CPU checked"}});
    int right = 0;
    for (std::size_t i = 0; i < r.uses.size(); ++i) {
        const Use& u = r.uses[i];
        right += u.read_wrong == 0 && u.written_wrong == 0;
        table.add_row({format("GPU %d", u.gpu), u.buffer, format("%.1f", u.copy_gbps),
                       format("%.1f - %.1f", u.copy_low, u.copy_high),
                       format("%zu wrong", u.read_wrong), format("%zu wrong", u.written_wrong)});
    }
    table.print();
    std::printf(
        "\nUnder unified addressing a pinned allocation is one address in every GPU's space, so\n"
        "the flag no longer decides who can use it. Without unified addressing (32-bit\n"
        "programs, CUDA before 4.0) memory pinned in one context was ordinary pageable memory\n"
        "to the others, and Portable was the way to share it.\n\n");
    const int uses = static_cast<int>(r.uses.size());
    ctx.claim(tutorial::documented(
        "flags_report_portable",
        "cudaHostGetFlags reports Portable for the buffer that asked for it",
        (r.found.flags[0] & cudaHostAllocPortable) != 0, flag_names(r.found.flags[0]),
        "the flags were not recorded as given", passes_back_flags));
    ctx.claim(tutorial::observed(
        "default_not_portable", "...and not for the Default buffer",
        (r.found.flags[1] & cudaHostAllocPortable) == 0, flag_names(r.found.flags[1]),
        "under unified addressing every cudaHostAlloc buffer is reachable from every device "
        "whatever its flags, and the driver reports Mapped, which was not asked for: which flags "
        "it reports beyond those given is not specified"));
    // The Runtime API reference's Unified Addressing: memory from cudaMallocHost or cudaHostAlloc
    // is directly accessible from every device with unified addressing, whether or not
    // cudaHostAllocPortable or cudaHostAllocMapped was given.
    ctx.claim(tutorial::documented(
        "every_gpu_in_place",
        "with or without Portable, kernels on every GPU read and write the buffer in place",
        right == uses, format("%d of %d GPU-buffer pairs right", right, uses),
        "the memory is not mapped for every GPU: no unified addressing",
        tutorial::Entry{"Runtime API reference: Unified Addressing",
                        "cudaHostAllocPortable cudaHostAllocMapped", "is always"}));
    ctx.claim(tutorial::at_least(
                  "default_as_fast",
                  "every GPU copies from a Default buffer as fast as from a Portable one "
                  "(Default / Portable, lowest GPU)",
                  worst_default_vs_portable(r), 0.8, "x",
                  "a GPU treated the Default buffer as pageable memory (staged through its own "
                  "pinned buffer), which only happens without unified addressing")
                  .again([&] {
                      // Fresh rounds: both buffers allocated and every GPU's copies timed afresh.
                      return worst_default_vs_portable(
                          measure_portable(gpus, ctx.device, bytes / 4, rounds));
                  }));
    return ctx.verdict(
        right == uses,
        format("every GPU's kernels read and wrote both buffers: %d of %d right", right, uses));
}

TUTORIAL_SECTION(portable_pinned, run_portable_pinned);
