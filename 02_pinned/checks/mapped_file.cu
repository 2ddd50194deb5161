// Checks of section mapped_file: runs the walkthrough of ../mapped_file.cu round after round,
// tables what each registration answered and what each way of loading the file cost, and judges
// the registrations the reference promises, the pinned upload's rate and every value read.
#include "02_pinned/mapped_file.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

#include <string>

using tutorial::format;
using tutorial::format_bytes;

namespace {

std::size_t all_wrong(const Found& f) {
    return f.wrong_read + f.wrong_unpinned + f.wrong_pinned + f.wrong_kernel + f.wrong_private;
}

// The walkthrough `runs` times (after a warm-up), its steps timed: medians, ms.
struct Medians {
    Found found;            // the last round's
    std::size_t wrong = 0;  // over every round
    double read_ms = 0, unpinned_ms = 0, pin_ms = 0, pinned_ms = 0;
};

Medians time_rounds(std::size_t bytes, int device, int runs) {
    tutorial::StepTimes times;
    Medians m;
    for (int r = 0; r < runs; ++r) {
        m.found = walkthrough(bytes, device);
        if (!m.found.file_made) return m;  // no room for the file in this round: nothing to judge
        m.wrong += all_wrong(m.found);
    }
    m.read_ms = times.median_host_ms(read_file);
    m.unpinned_ms = times.median_ms(upload_unpinned);
    if (m.found.read_only == cudaSuccess) {
        m.pin_ms = times.median_host_ms(pin_mapping);
        m.pinned_ms = times.median_ms(upload_pinned);
    }
    return m;
}

void print_registrations(const Found& f) {
    tutorial::Table table({{"mapping of the file"}, {"flags"}, {"cudaHostRegister returned"}});
    table.named("registrations");
    table.add_row({"MAP_SHARED, PROT_READ", "ReadOnly | Mapped",
                   f.read_only_supported == 1 ? cudaGetErrorName(f.read_only)
                                              : "(hostRegisterReadOnlySupported = 0: not tried)"});
    table.add_row({"MAP_SHARED, PROT_READ", "Default", cudaGetErrorName(f.default_flags)});
    table.add_row(
        {"MAP_PRIVATE, PROT_READ | PROT_WRITE", "Default", cudaGetErrorName(f.private_copy)});
    table.print();
}

void print_costs(const Medians& m, std::size_t bytes) {
    const double gib = static_cast<double>(bytes) / (1 << 30);
    tutorial::Table table({{"step"},
                           {"ms", tutorial::Align::right},
                           {"ms per GiB", tutorial::Align::right},
                           {"GB/s", tutorial::Align::right}});
    table.named("costs");
    const auto add = [&](const tutorial::Step& step, double ms) {
        table.add_row({step.name, format("%.2f", ms), format("%.1f", ms / gib),
                       format("%.1f", tutorial::gb_per_s(bytes, ms))});
    };
    add(read_file, m.read_ms);
    add(upload_unpinned, m.unpinned_ms);
    if (m.found.read_only == cudaSuccess) {
        add(pin_mapping, m.pin_ms);
        add(upload_pinned, m.pinned_ms);
    }
    table.print();
}

// What each registration answered, and the kernel's read through the pinned mapping.
void claim_registrations(tutorial::Context& ctx, const Found& f) {
    const bool supported = f.read_only_supported == 1;
    const std::string unsupported =
        supported ? "" : "hostRegisterReadOnlySupported = 0: cudaHostRegisterReadOnly not here";
    ctx.claim(tutorial::documented(
                  "read_only_pins",
                  "a file mapped shared and read-only pins with cudaHostRegisterReadOnly",
                  f.read_only == cudaSuccess,
                  format("cudaHostRegister returned %s", cudaGetErrorName(f.read_only)),
                  "the device or the kernel refused to pin the file's pages",
                  tutorial::Entry{"Runtime API reference: cudaDevAttrHostRegisterReadOnlySupported",
                                  "cudaHostRegisterReadOnly register memory", "supports"}),
              unsupported);
    ctx.claim(tutorial::observed(
        "default_flags_refused", "the same read-only mapping with the default flags is refused",
        f.default_flags != cudaSuccess,
        format("cudaHostRegister returned %s", cudaGetErrorName(f.default_flags)),
        "the cudaHostRegister entry calls cudaHostRegisterReadOnly required for memory mapped "
        "read-only, a duty on the caller; it names no error for leaving it out"));
    const bool can_register =
        tutorial::device_attribute(ctx.device, cudaDevAttrHostRegisterSupported) == 1;
    ctx.claim(
        tutorial::documented(
            "private_mapping_pins",
            "a private writable mapping of the same file pins with the default flags",
            f.private_copy == cudaSuccess,
            format("cudaHostRegister returned %s", cudaGetErrorName(f.private_copy)),
            "the kernel refused to pin the mapping's pages",
            tutorial::Entry{"Runtime API reference: cudaHostRegister",
                            "Page-locks the memory range", "maps"}),
        can_register ? "" : "hostRegisterSupported = 0: cudaHostRegister is not supported here");
    ctx.claim(tutorial::documented(
                  "kernel_reads_file",
                  "a kernel reads the file's pages in place through cudaHostGetDevicePointer's "
                  "pointer",
                  f.wrong_kernel == 0, format("%zu values read wrong", f.wrong_kernel),
                  "the device pointer did not reach the file's pages",
                  tutorial::Entry{"Runtime API reference: cudaHostGetDevicePointer",
                                  "device pointer of mapped host memory", "Passes back"}),
              f.read_only == cudaSuccess ? "" : "the read-only mapping was not pinned");
}

// The upload from the pinned mapping against the same mapping unpinned.
void claim_pinned_rate(tutorial::Context& ctx, const Medians& m, std::size_t bytes, int runs) {
    const Found& f = m.found;
    const std::string unsupported =
        f.read_only_supported == 1 ? "" : "hostRegisterReadOnlySupported = 0: not tried";
    const std::string not_pinned =
        !unsupported.empty()                         ? unsupported
        : f.read_only != cudaSuccess                 ? "the read-only mapping was not pinned"
        : !tutorial::why_timing_not_judged().empty() ? tutorial::why_timing_not_judged()
        : tutorial::device_attribute(ctx.device,
                                     cudaDevAttrPageableMemoryAccessUsesHostPageTables) == 1
            ? "pageableMemoryAccessUsesHostPageTables = 1: the GPU reads pageable memory in place, "
              "and an unpinned copy may run at the pinned rate"
            : tutorial::why_too_small(bytes, 16 << 20,
                                      "so small a copy is mostly its fixed cost, pinned or not");
    ctx.claim(tutorial::at_least(
                  "pinned_mapping_faster",
                  "an upload from the pinned mapping is faster than from the same mapping "
                  "unpinned (unpinned ms / pinned ms)",
                  m.pinned_ms > 0 ? m.unpinned_ms / m.pinned_ms : 0.0, 1.5, "x",
                  "the unpinned upload ran at the pinned rate, or the link is slow both ways")
                  .again([&] {
                      const Medians n = time_rounds(bytes, ctx.device, runs);
                      return n.found.file_made && n.pinned_ms > 0 ? n.unpinned_ms / n.pinned_ms
                                                                  : 0.0;
                  }),
              not_pinned);
}

}  // namespace

tutorial::Result run_mapped_file(tutorial::Context& ctx) {
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (64 << 20) : (256 << 20));
    const int runs = ctx.quick() ? 3 : 5;
    std::printf(
        "A file of %s of known values in $TMPDIR (unlinked at once), then: read() into memory\n"
        "of our own; mmap(MAP_SHARED, PROT_READ) and an upload from the mapping; the mapping\n"
        "pinned with cudaHostRegisterReadOnly | Mapped, an upload and a kernel reading it in\n"
        "place; the same mapping with the default flags; a private writable mapping pinned.\n"
        "%d rounds after a warm-up; medians.\n\n",
        format_bytes(bytes).c_str(), runs);
    // A warm-up: the kernels loaded, the file's pages cached once.
    if (!walkthrough(bytes, ctx.device).file_made) {
        return ctx.skip("no room for a file of " + format_bytes(bytes) + " in $TMPDIR (or /tmp)");
    }
    const Medians m = time_rounds(bytes, ctx.device, runs);
    if (!m.found.file_made) {
        return ctx.skip("no room for a file of " + format_bytes(bytes) +
                        " in $TMPDIR (or /tmp) "
                        "in one of the rounds");
    }
    const Found& f = m.found;
    print_registrations(f);
    std::printf("\n");
    print_costs(m, bytes);
    std::printf(
        "\nA server that maps its weights keeps one copy of them, the page cache's, and pinning\n"
        "the mapping lets uploads run at the pinned rate from those very pages. The\n"
        "pages must stay read-only to the GPU: pin them with cudaHostRegisterReadOnly.\n\n");

    claim_registrations(ctx, f);
    claim_pinned_rate(ctx, m, bytes, runs);
    return ctx.verdict(m.wrong == 0,
                       format("every value read from the file was right, every way and round "
                              "(%zu wrong)",
                              m.wrong));
}

TUTORIAL_SECTION(mapped_file, run_mapped_file);
