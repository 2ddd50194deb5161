// Checks of section memcpy_memset: runs ../memcpy_memset.cu's walkthrough on 64 MiB buffers with
// the driver's Unified Memory counters on, counting what each call and each read after it moved:
// the whole buffer coming over to the reader means the call left the pages with the processor
// N.2.2.7 names. Judges the data every call left, and where the pages were.
#include "03_managed/memcpy_memset.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/harness/um_counters.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::format;

namespace {

// 64 MiB of 32-bit values a buffer: as much as one counted step moves without losing records.
constexpr std::size_t count = std::size_t{16} << 20;
constexpr std::size_t bytes = count * sizeof(std::uint32_t);

// Each call of the walkthrough by its two steps, and what N.2.2.7 says of it on a device with
// concurrentManagedAccess = 1, for memory attached globally (the default).
struct Call {
    CallSteps steps;      // the call's step, and the step after it: the other processor reads
    bool gpu_reaches;     // N.2.2.7 has the GPU reach the managed side (else the CPU)
    bool managed_source;  // the managed buffer is the copy's source (else its destination)
};

const Call calls[] = {
    {out_host_to_host, false, true},  {out_host_to_device, false, true},
    {in_host_to_host, false, false},  {in_device_to_host, false, false},
    {out_device_to_host, true, true}, {out_device_to_device, true, true},
    {in_host_to_device, true, false}, {in_device_to_device, true, false},
    {in_default, true, false},        {out_default, true, true},
    {memsets, true, false},
};
constexpr std::size_t call_count = sizeof calls / sizeof calls[0];

// The walkthrough once, counted: what it found, and what each call and each read moved.
struct Counted {
    Found found;
    tutorial::UmTraffic call[call_count];
    tutorial::UmTraffic read[call_count];
};

Counted count_walkthrough(tutorial::UmCounters& counters) {
    tutorial::StepTraffic traffic(counters);
    Counted c;
    c.found = walkthrough(count);
    const std::vector<std::string>& ran = traffic.order();
    for (std::size_t i = 0; i < call_count; ++i) {
        for (const tutorial::Step& step : {calls[i].steps.call, calls[i].steps.read}) {
            if (std::find(ran.begin(), ran.end(), step.name) == ran.end()) {
                std::fprintf(stderr, "checks: the walkthrough ran no step named \"%s\"\n",
                             step.name);
                std::exit(1);
            }
        }
        c.call[i] = traffic.of(calls[i].steps.call);
        c.read[i] = traffic.of(calls[i].steps.read);
    }
    return c;
}

// The share of the buffer (%) that `moved` is.
double share(std::uint64_t moved) {
    return 100.0 * static_cast<double>(moved) / static_cast<double>(bytes);
}

// What the read after call i pulled over: device to host for the CPU's read, host to device for
// a kernel's.
double read_moved(const Counted& c, std::size_t i) {
    return share(calls[i].gpu_reaches ? c.read[i].dtoh.total : c.read[i].htod.total);
}

// Where the counts put the pages after call i: all of the buffer moving to the reader means they
// were with the other processor; (almost) nothing moving, with the reader.
std::string pages_were_with(const Counted& c, std::size_t i) {
    if (!c.read[i].counted) return "not counted";
    const char* named = calls[i].gpu_reaches ? "the GPU" : "the CPU";
    const char* reader = calls[i].gpu_reaches ? "the CPU" : "the GPU";
    const double moved = read_moved(c, i);
    if (moved >= 90.0) return named;
    if (moved <= 2.0) return std::string(reader) + "  (DIFFERS)";
    return format("both (%.0f%% moved)  (DIFFERS)", moved);
}

// The two tables: what each step moved, then what that says.
void print_counts(const Counted& c) {
    tutorial::Table counts(tutorial::um_columns("step"));
    counts.named("counted");
    for (std::size_t i = 0; i < call_count; ++i) {
        counts.add_row(tutorial::um_cells(calls[i].steps.call.name, c.call[i]));
        counts.add_row(
            tutorial::um_cells(std::string("  then ") + calls[i].steps.read.name, c.read[i]));
    }
    counts.print();
    std::printf("\n");
    tutorial::Table table({{"call"},
                           {"managed side"},
                           {"N.2.2.7: reached by"},
                           {"moved by the read", tutorial::Align::right},
                           {"pages were with"}});
    table.named("pages");
    for (std::size_t i = 0; i < call_count; ++i) {
        table.add_row({calls[i].steps.call.name, calls[i].managed_source ? "source" : "destination",
                       calls[i].gpu_reaches ? "the GPU" : "the CPU",
                       c.read[i].counted ? format("%.0f%%", read_moved(c, i)) : "-",
                       pages_were_with(c, i)});
    }
    table.print();
}

// What the counted claims judge: the least share of the buffer that moved, over a set of calls.
struct Shares {
    double gpu_reached_read = 1e9;  // the CPU's read after a call N.2.2.7 has the GPU reach
    double cpu_reached_read = 1e9;  // a kernel's read after a call N.2.2.7 has the CPU reach
    double source_pulled = 1e9;     // a copy whose CPU-written source the GPU reaches: the call
    std::string lost;               // um_records_lost of the first step that shows a loss, or ""
};

Shares shares_of(const Counted& c) {
    Shares s;
    for (std::size_t i = 0; i < call_count; ++i) {
        double& read = calls[i].gpu_reaches ? s.gpu_reached_read : s.cpu_reached_read;
        read = std::min(read, read_moved(c, i));
        if (calls[i].gpu_reaches && calls[i].managed_source)
            s.source_pulled = std::min(s.source_pulled, share(c.call[i].htod.total));
        if (s.lost.empty()) s.lost = tutorial::um_records_lost(c.call[i]);
        if (s.lost.empty()) s.lost = tutorial::um_records_lost(c.read[i]);
    }
    return s;
}

// The counted claims. `why` is why they cannot be judged here ("" when they can); a step whose
// records were lost makes them not judged too. A GPU-reached call is one whose managed side
// N.2.2.7 has the GPU reach (the pages table's "reached by"), a CPU-reached call the others.
void claim_pages(tutorial::Context& ctx, const Shares& s, std::string why) {
    if (why.empty()) why = s.lost;
    ctx.claim(tutorial::counted_at_least(
                  "gpu_reached_pages_on_gpu",
                  "after each GPU-reached call, a CPU read pulls the buffer back "
                  "(least MiB device to host, % of the buffer)",
                  s.gpu_reached_read, 90.0, "%",
                  "the pages were in host memory after the call: the GPU reached them where they "
                  "were, or the driver moved them back"),
              why);
    ctx.claim(tutorial::counted_at_least(
                  "cpu_reached_pages_on_host",
                  "after each CPU-reached call, a kernel read pulls the buffer over "
                  "(least MiB host to device, % of the buffer)",
                  s.cpu_reached_read, 90.0, "%",
                  "the pages were in device memory after the call: the GPU did the access, or "
                  "the driver moved them there"),
              why);
    ctx.claim(tutorial::counted_at_least(
                  "gpu_pulls_managed_source",
                  "a GPU-reached copy pulls its CPU-written source over in the call "
                  "(least MiB host to device, % of the buffer)",
                  s.source_pulled, 90.0, "%",
                  "the copy read the source where it was, in host memory, or the CPU did the "
                  "access"),
              why);
}

// The data claims: what the other processor read after each call.
void claim_data(tutorial::Context& ctx, const Found& found) {
    // N.2.2.7: as managed memory can be reached from the host or from the device, cudaMemcpy*()
    // relies on (依赖于) the cudaMemcpyKind to tell which, and its next sentences say, kind by
    // kind, from where it will reach the managed side. It rules on the managed side only: for the
    // pinned side, a kind that names it device memory does not match the pointer.
    ctx.claim(tutorial::documented(
        "every_kind_copies",
        "cudaMemcpy copies to and from managed memory under every kind that names the other "
        "buffer, pinned, as host memory (and Default)",
        found.copied_wrong == 0,
        format("%zu values read wrong after those 6 copies", found.copied_wrong),
        "a copy left wrong data: was the other buffer named as what it is?",
        tutorial::Entry{"Programming Guide, N.2.2.7 Memcpy()/Memset() Behavior With Managed "
                        "Memory",
                        "cudaMemcpy*() cudaMemcpyKind", "依赖于"}));
    ctx.claim(tutorial::observed(
        "device_kinds_copy",
        "...and under the 4 kinds that name the pinned buffer device memory (pinned <- managed "
        "HostToDevice and DeviceToDevice, managed <- pinned DeviceToHost and DeviceToDevice)",
        found.as_device_wrong == 0,
        format("%zu values read wrong after those 4 copies", found.as_device_wrong),
        "N.2.2.7 rules only on the managed side; for pointers that do not match the copy's kind "
        "the cudaMemcpy entry calls the result undefined"));
    // The cudaMemset entry: it fills the first count bytes at devPtr with the value (N.2.2.7 adds
    // that on managed memory it always reaches the data from the device, which the counted
    // claims judge); that the program must synchronize before the CPU touches the data is the
    // caller's duty, which the walkthrough does.
    ctx.claim(tutorial::documented(
        "memsets_then_sync",
        "cudaMemset and cudaMemsetAsync fill managed memory, and after a synchronize the CPU "
        "reads what they set",
        found.set_wrong == 0, format("%zu of %zu words wrong", found.set_wrong, count),
        "a memset missed bytes, or the host read before it was done",
        tutorial::Entry{"Runtime API reference: cudaMemset", "devPtr value", "fills"}));
}

}  // namespace

tutorial::Result run_memcpy_memset(tutorial::Context& ctx) {
    std::printf(
        "The walkthrough, once, on fresh %s managed buffers: each cudaMemcpyKind in the order\n"
        "of N.2.2.7 (a pinned buffer on the other side), then cudaMemset. After each call the\n"
        "processor N.2.2.7 does NOT name for it reads the whole buffer. The driver's Unified\n"
        "Memory counters count what each step moved: the whole buffer coming over to the\n"
        "reader means the pages were with the processor N.2.2.7 names; nothing, with the "
        "reader.\n\n",
        tutorial::format_bytes(bytes).c_str());
    tutorial::UmCounters counters;
    std::printf("%s\n\n", counters.control_line().c_str());
    const Counted c = count_walkthrough(counters);
    print_counts(c);
    std::printf(
        "\nN.2.2.7 gives every kind a meaning for the managed side: HostTo* or *ToHost makes the\n"
        "CPU reach it (where it may coherently), DeviceTo* or *ToDevice the GPU, Default the\n"
        "GPU here; cudaMemset always uses the GPU. The other buffer must still be named as what\n"
        "it is (chapter 01's memcpy_default): pinned memory is what every kind names rightly.\n"
        "Where the pages stay afterwards is the driver's choice: the counts show it.\n\n");
    claim_data(ctx, c.found);
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    claim_pages(ctx, shares_of(c),
                !concurrent ? "concurrentManagedAccess = 0 here: N.2.2.7 then has the GPU reach "
                              "managed memory for every kind"
                            : tutorial::why_not_counted(
                                  counters, {}, tutorial::why_hardware_coherent(ctx.device)));
    return ctx.verdict(c.found.copied_wrong + c.found.set_wrong == 0,
                       format("every copy whose kind fits the pinned buffer and every memset "
                              "left the right values (%zu and %zu wrong), read where the other "
                              "processor read them",
                              c.found.copied_wrong, c.found.set_wrong));
}

TUTORIAL_SECTION(memcpy_memset, run_memcpy_memset);
