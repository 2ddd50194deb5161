// Checks of section memcpy_memset: part 1 copies between managed memory and device or pageable
// memory under every kind, in two child processes; part 2 reads back ../memcpy_memset.cu's
// memsets; part 3 counts where each call of ../memcpy_memset.cu leaves the pages. Judges all three.
#include "03_managed/memcpy_memset.cu"

#include "common/buffer.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/um_counters.hpp"
#include "common/patterns.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::Buffer;
using tutorial::MemoryKind;

namespace {

constexpr std::size_t count = 1 << 18;
constexpr std::size_t bytes = count * sizeof(std::uint32_t);

struct KindName {
    cudaMemcpyKind kind;
    const char* name;
};
const KindName kinds[] = {
    {cudaMemcpyHostToHost, "HostToHost"},     {cudaMemcpyHostToDevice, "HostToDevice"},
    {cudaMemcpyDeviceToHost, "DeviceToHost"}, {cudaMemcpyDeviceToDevice, "DeviceToDevice"},
    {cudaMemcpyDefault, "Default"},
};

// Part 1's pairs: managed memory and a partner, device or pageable memory. N.2.2.7 gives every
// kind a meaning for the managed side; the partner must be named as what it is (the cudaMemcpy
// entry calls a kind that does not match the pointers undefined). Device memory is named rightly
// by DeviceTo* as a source and *ToDevice as a destination, pageable memory by HostTo* and
// *ToHost; Default lets the runtime tell both from the addresses.
bool names_partner_rightly(MemoryKind partner, bool partner_is_source, cudaMemcpyKind kind) {
    if (kind == cudaMemcpyDefault) return true;
    const bool named_device =
        partner_is_source ? kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice
                          : kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    return named_device == (partner == MemoryKind::device);
}

// What driver 580.159.04 did with a pair the reference leaves undefined: it refused pageable
// memory named as device memory (cudaErrorInvalidValue) and copied device memory named as host
// memory anyway. Reported, never judged: another driver may do otherwise.
bool as_driver_580(MemoryKind partner, cudaError_t status, bool arrived) {
    return partner == MemoryKind::pageable ? status == cudaErrorInvalidValue && !arrived
                                           : status == cudaSuccess && arrived;
}

// Part 3: which processor the runtime uses for the managed side of a copy or a memset, and
// where the pages are afterwards. N.2.2.7 says which processor reaches the managed side; where its
// pages stay is the driver's choice, so the Unified Memory counters tell: after each call the
// OTHER processor reads the whole buffer, and what that read moves says where the pages were (all
// of the buffer coming over: with the processor N.2.2.7 names; nothing: already with the reader).
// The call itself is counted too. The partner is pinned memory, which a system with unified
// addressing lets both processors reach at the same address, so every kind names it rightly.
constexpr std::size_t side_count = 16 << 20;  // 64 MiB of 32-bit words: small enough to count
constexpr std::size_t side_bytes = side_count * sizeof(std::uint32_t);
constexpr std::uint32_t side_seed = 7;

struct SideCase {
    const char* call;
    Operation operation;
    cudaMemcpyKind kind;    // for the copies
    bool n227_says_device;  // N.2.2.7: the GPU reaches the managed side (else the CPU)
};

struct SideResult {
    SideCase c{};
    tutorial::UmTraffic call;  // what the call itself moved
    tutorial::UmTraffic read;  // what the other processor's read of the whole buffer moved
    bool data_ok = false;      // the read's sum is what the call should have left there
};

const SideCase side_cases[] = {
    {"cudaMemcpy(managed, pinned, HostToHost)", Operation::copy_into, cudaMemcpyHostToHost, false},
    {"cudaMemcpy(managed, pinned, HostToDevice)", Operation::copy_into, cudaMemcpyHostToDevice,
     true},
    {"cudaMemcpy(managed, pinned, DeviceToHost)", Operation::copy_into, cudaMemcpyDeviceToHost,
     false},
    {"cudaMemcpy(managed, pinned, DeviceToDevice)", Operation::copy_into, cudaMemcpyDeviceToDevice,
     true},
    {"cudaMemcpy(managed, pinned, Default)", Operation::copy_into, cudaMemcpyDefault, true},
    {"cudaMemcpy(pinned, managed, HostToHost)", Operation::copy_from, cudaMemcpyHostToHost, false},
    {"cudaMemcpy(pinned, managed, HostToDevice)", Operation::copy_from, cudaMemcpyHostToDevice,
     false},
    {"cudaMemcpy(pinned, managed, DeviceToHost)", Operation::copy_from, cudaMemcpyDeviceToHost,
     true},
    {"cudaMemcpy(pinned, managed, DeviceToDevice)", Operation::copy_from, cudaMemcpyDeviceToDevice,
     true},
    {"cudaMemcpy(pinned, managed, Default)", Operation::copy_from, cudaMemcpyDefault, true},
    {"cudaMemset(managed, 0, bytes)", Operation::memset, cudaMemcpyDefault, true},
};

// A fresh managed buffer; as a source, filled by the CPU first, so its pages start on the host.
// After the call, the processor N.2.2.7 does not name sums the whole buffer: the CPU where the
// GPU reached it, a kernel where the CPU did.
SideResult counted_case(tutorial::UmCounters& counters, const SideCase& c, std::uint32_t* pinned) {
    std::uint32_t* managed = nullptr;
    CUDA_CHECK(cudaMallocManaged(&managed, side_bytes));
    if (c.operation == Operation::copy_from) fill_on_host(managed, side_count, side_seed);
    SideResult r;
    r.c = c;
    r.call = counters.measure([&] { operate(c.operation, managed, pinned, side_bytes, c.kind); });
    std::uint64_t sum = 0;
    r.read = counters.measure([&] {
        sum = c.n227_says_device ? sum_on_host(managed, side_count)
                                 : sum_on_device(managed, side_count);
    });
    CUDA_CHECK(cudaFree(managed));
    const std::uint64_t expected =
        c.operation == Operation::memset ? 0 : pattern_sum(side_count, side_seed);
    r.data_ok = sum == expected;
    return r;
}

std::vector<SideResult> measure_sides(tutorial::UmCounters& counters) {
    std::uint32_t* pinned = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, side_bytes));
    fill_on_host(pinned, side_count, side_seed);
    std::vector<SideResult> results;
    for (const SideCase& c : side_cases) results.push_back(counted_case(counters, c, pinned));
    CUDA_CHECK(cudaFreeHost(pinned));
    return results;
}

// The share of the buffer (%) that `bytes` is.
double share(std::uint64_t bytes) {
    return 100.0 * static_cast<double>(bytes) / static_cast<double>(side_bytes);
}

// The share of the buffer the reader after the call pulled over: device to host for the CPU's
// read, host to device for a kernel's.
double read_moved(const SideResult& r) {
    return share(r.c.n227_says_device ? r.read.dtoh.total : r.read.htod.total);
}

// Where the counts put the pages after the call: all of the buffer moving to the reader means
// they were with the other processor; (almost) nothing moving, with the reader.
std::string pages_were_with(const SideResult& r) {
    if (!r.read.counted) return "not counted";
    const char* named = r.c.n227_says_device ? "the GPU" : "the CPU";
    const char* reader = r.c.n227_says_device ? "the CPU" : "the GPU";
    const double moved = read_moved(r);
    if (moved >= 90.0) return named;
    if (moved <= 2.0) return std::string(reader) + "  (DIFFERS)";
    return tutorial::format("both (%.0f%% moved)  (DIFFERS)", moved);
}

// Part 3's two tables: what each step moved, then what that says.
void print_sides(const std::vector<SideResult>& results) {
    tutorial::Table counts(tutorial::um_columns("step"));
    for (const SideResult& r : results) {
        counts.add_row(tutorial::um_cells(r.c.call, r.call));
        counts.add_row(tutorial::um_cells(
            r.c.n227_says_device ? "  then the CPU reads it all" : "  then a kernel reads it all",
            r.read));
    }
    counts.print();
    std::printf("\n");
    tutorial::Table table({{"call"},
                           {"managed side"},
                           {"N.2.2.7: reached by"},
                           {"moved by the read", tutorial::Align::right},
                           {"pages were with"},
                           {"data"}});
    for (const SideResult& r : results) {
        const bool source = r.c.operation == Operation::copy_from;
        table.add_row({r.c.call, source ? "source" : "destination",
                       r.c.n227_says_device ? "the GPU" : "the CPU",
                       r.read.counted ? tutorial::format("%.0f%%", read_moved(r)) : "-",
                       pages_were_with(r), r.data_ok ? "ok" : "WRONG"});
    }
    table.print();
}

// What part 3's claims judge: the least share of the buffer that moved, over a set of cases.
struct SideFacts {
    double gpu_reached_read = 1e9;  // the CPU's read after a call N.2.2.7 has the GPU reach
    double cpu_reached_read = 1e9;  // a kernel's read after a call N.2.2.7 has the CPU reach
    double source_pulled = 1e9;     // a copy whose CPU-written source the GPU reaches: the call
    int data_ok = 0;
    std::string lost;  // um_records_lost of the first step that shows a loss, or ""
};

SideFacts facts_of(const std::vector<SideResult>& results) {
    SideFacts f;
    for (const SideResult& r : results) {
        double& read = r.c.n227_says_device ? f.gpu_reached_read : f.cpu_reached_read;
        read = std::min(read, read_moved(r));
        if (r.c.n227_says_device && r.c.operation == Operation::copy_from) {
            f.source_pulled = std::min(f.source_pulled, share(r.call.htod.total));
        }
        f.data_ok += r.data_ok ? 1 : 0;
        if (f.lost.empty()) f.lost = tutorial::um_records_lost(r.call);
        if (f.lost.empty()) f.lost = tutorial::um_records_lost(r.read);
    }
    return f;
}

// One pair of part 1: `kind` copies between fresh managed memory and a `partner` buffer.
struct PairResult {
    cudaError_t status;
    bool arrived;  // the destination holds the source's pattern (checked where it lives)
};

PairResult copy_pair(MemoryKind partner, bool from_managed, cudaMemcpyKind kind,
                     std::uint32_t seed) {
    const Buffer managed(MemoryKind::managed, bytes);
    const Buffer other(partner, bytes);
    const Buffer& source = from_managed ? managed : other;
    const Buffer& destination = from_managed ? other : managed;
    fill(source, count, seed);
    fill(destination, count, ~seed);  // something else, so a copy that did nothing shows
    const cudaError_t status = cudaMemcpy(destination.get(), source.get(), bytes, kind);
    // A failed call also leaves its error behind as the "last error": clear it.
    (void)cudaGetLastError();
    return {status, mismatches(destination, count, seed) == 0};
}

}  // namespace

// Child role: copies to and from managed memory under every cudaMemcpyKind (args: device, then
// "defined" or "undefined"). "defined": the pairs whose kind names the other buffer as what it
// is, which N.2.2.7 and the cudaMemcpy entry define; exits 0 when all of them copied.
// "undefined": the pairs whose kind names it wrongly, which the cudaMemcpy entry calls undefined;
// prints what this driver did and how many pairs it did as driver 580.159.04 did, never judged.
// Two children, so that whatever an undefined pair does cannot touch the defined ones.
int child_managed_copies(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const bool defined_set = args.at(1) == "defined";
    const MemoryKind partners[] = {MemoryKind::device, MemoryKind::pageable};
    int pairs = 0, as_expected = 0;
    std::uint32_t seed = 1;
    std::printf("%-16s", "kind");
    for (MemoryKind partner : partners) {
        const std::string name = tutorial::kind_name(partner);
        std::printf("  %-21s  %-21s", ("managed -> " + name).c_str(),
                    (name + " -> managed").c_str());
    }
    std::printf("\n");
    for (const KindName& k : kinds) {
        std::printf("%-16s", k.name);
        for (MemoryKind partner : partners) {
            for (const bool from_managed : {true, false}) {
                if (names_partner_rightly(partner, !from_managed, k.kind) != defined_set) {
                    std::printf("  %-21s", "-");  // in the other child's set
                    continue;
                }
                const PairResult r = copy_pair(partner, from_managed, k.kind, seed++);
                const bool expected = defined_set ? r.status == cudaSuccess && r.arrived
                                                  : as_driver_580(partner, r.status, r.arrived);
                ++pairs;
                as_expected += expected ? 1 : 0;
                std::string outcome = r.status == cudaSuccess ? (r.arrived ? "ok" : "WRONG DATA")
                                                              : cudaGetErrorName(r.status);
                if (!expected) outcome += defined_set ? " (UNEXPECTED)" : " (not as 580)";
                std::printf("  %-21s", outcome.c_str());
            }
        }
        std::printf("\n");
    }
    if (defined_set) {
        std::printf("copied -> %d of %d\n", as_expected, pairs);
        return as_expected == pairs ? 0 : 3;
    }
    std::printf("done as driver 580.159.04 did them -> %d of %d\n", as_expected, pairs);
    return 0;
}

namespace {

// Part 2: the bytes ../memcpy_memset.cu's two memsets left, as the CPU reads them: how many are
// wrong.
std::size_t read_back_memsets() {
    std::uint8_t* p = memsets_on_cpu_touched(bytes);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < bytes; ++i) wrong += p[i] != (i < bytes / 2 ? 0xab : 0xcd);
    CUDA_CHECK(cudaFree(p));
    std::printf(
        "   cudaMemset (first half, 0xab) and cudaMemsetAsync (second half, 0xcd), then\n"
        "   cudaDeviceSynchronize: %zu of %zu bytes wrong when the CPU reads them back.\n",
        wrong, bytes);
    return wrong;
}

// Part 3's counted claims. `why` is why they cannot be judged here ("" when they can); a step
// whose records were lost makes them not judged too.
void judge_sides(tutorial::Context& ctx, const SideFacts& f, std::string why) {
    if (why.empty()) why = f.lost;
    ctx.claim(tutorial::counted_at_least(
                  "gpu_reached_pages_on_gpu",
                  "after each call whose managed side N.2.2.7 has the GPU reach, the CPU's read "
                  "pulls the whole buffer back (the pages were on the GPU): the least MiB device "
                  "to host, as a share of the buffer",
                  f.gpu_reached_read, 90.0, "%",
                  "the pages were in host memory after the call: the GPU reached them where they "
                  "were, or the driver moved them back"),
              why);
    ctx.claim(tutorial::counted_at_least(
                  "cpu_reached_pages_on_host",
                  "after each call whose managed side N.2.2.7 has the CPU reach, a kernel's read "
                  "pulls the whole buffer over (the pages were in host memory): the least MiB "
                  "host to device, as a share of the buffer",
                  f.cpu_reached_read, 90.0, "%",
                  "the pages were in device memory after the call: the GPU did the access, or "
                  "the driver moved them there"),
              why);
    ctx.claim(tutorial::counted_at_least(
                  "gpu_pulls_managed_source",
                  "a copy whose managed source the GPU reaches pulls the CPU-written pages to the "
                  "GPU during the copy: the least MiB host to device, as a share of the buffer",
                  f.source_pulled, 90.0, "%",
                  "the copy read the source where it was, in host memory, or the CPU did the "
                  "access"),
              why);
}

}  // namespace

tutorial::Result run_memcpy_memset(tutorial::Context& ctx) {
    std::printf(
        "1. cudaMemcpy of %s to and from managed memory under every kind, in two\n"
        "   children. The kinds that name the other buffer as what it is (defined):\n",
        tutorial::format_bytes(bytes).c_str());
    const std::string device = std::to_string(ctx.device);
    const tutorial::ChildResult defined =
        tutorial::run_child("managed_copies", {device, "defined"});
    tutorial::print_child_output(defined);
    std::printf("   The child %s.\n", defined.describe().c_str());
    const std::string copied = tutorial::child_answer(defined, "copied");
    std::printf(
        "   The kinds that name it wrongly, which the cudaMemcpy entry calls undefined:\n"
        "   what this driver did, not judged:\n");
    const tutorial::ChildResult undefined =
        tutorial::run_child("managed_copies", {device, "undefined"});
    tutorial::print_child_output(undefined);
    std::printf("   The child %s.\n", undefined.describe().c_str());
    const std::string as_580 = tutorial::child_answer(undefined, "done as driver");

    std::printf("\n2. cudaMemset on managed memory, first touched by the CPU:\n");
    const std::size_t wrong = read_back_memsets();
    std::printf(
        "\n3. Who touched the managed side? A fresh %s managed buffer per call (as a source,\n"
        "   filled by the CPU first); then the processor that N.2.2.7 does NOT name for the\n"
        "   call reads all of it. The driver's Unified Memory counters (CUPTI) count what each\n"
        "   step moved: the whole buffer coming over to the reader means the pages were with\n"
        "   the processor N.2.2.7 names; nothing moving, that they were with the reader.\n\n",
        tutorial::format_bytes(side_bytes).c_str());
    tutorial::UmCounters counters;
    std::printf("%s\n", counters.control_line().c_str());
    const std::vector<SideResult> sides = measure_sides(counters);
    print_sides(sides);
    const SideFacts facts = facts_of(sides);
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    std::printf(
        "\nThe Unified Memory appendix (N.2.2.7) gives every kind a meaning for the managed side:\n"
        "*ToDevice or DeviceTo* makes the GPU reach it, HostTo* or *ToHost the CPU (where the\n"
        "CPU may touch it at that moment), Default the GPU; cudaMemset always uses the GPU.\n"
        "The other buffer must still be named as what it is: the cudaMemcpy entry calls a\n"
        "wrong kind undefined, so part 1's second table is only what this driver did. Where\n"
        "the pages stay afterwards is the driver's choice: part 3 counts it on this driver.\n\n");
    // N.2.2.7: managed memory can (可以) be reached from the host or the device, and the kind
    // tells the runtime which.
    ctx.claim(tutorial::documented(
        "defined_kinds_copy",
        "cudaMemcpy copies to and from managed memory under every kind that names the other "
        "buffer rightly",
        defined.succeeded() && copied == "12 of 12", copied + " pairs copied",
        "a copy failed or left wrong data: the child's cells marked UNEXPECTED say which",
        tutorial::Entry{"Programming Guide, N.2.2.7 Memcpy()/Memset() Behavior With Managed "
                        "Memory",
                        "cudaMemcpy*() cudaMemcpyKind", "可以"}));
    ctx.claim(tutorial::observed(
        "undefined_kinds", "a kind naming device memory as host memory copied anyway; one naming pageable memory as "
        "device memory was refused with cudaErrorInvalidValue",
        undefined.succeeded() && as_580 == "8 of 8",
        undefined.exited ? as_580 + " undefined pairs as before"
                         : "the child " + undefined.describe(),
        "the cudaMemcpy entry calls a kind that does not match the pointers undefined"));
    // N.2.2.7: before the CPU touches the data, the program must (必须) synchronize.
    ctx.claim(tutorial::documented(
        "memsets_fill",
        "cudaMemset and cudaMemsetAsync fill managed memory the CPU touched first", wrong == 0,
        tutorial::format("%zu of %zu bytes wrong", wrong, bytes),
        "a memset missed bytes, or the host read before it was done",
        tutorial::Entry{"Programming Guide, N.2.2.7 Memcpy()/Memset() Behavior With Managed "
                        "Memory",
                        "CPU", "必须"}));
    judge_sides(ctx, facts,
                !concurrent ? "concurrentManagedAccess = 0 here: whether the CPU may touch the "
                              "pages depends on what else the GPU runs"
                            : tutorial::why_not_counted(
                                  counters, {}, tutorial::why_hardware_coherent(ctx.device)));
    const int cases = static_cast<int>(sides.size());
    return ctx.verdict(defined.succeeded() && wrong == 0 && facts.data_ok == cases,
                       tutorial::format("%s pairs the reference defines copied, both memsets "
                                        "landed (checked on the CPU), and %d of %d reads after "
                                        "part 3's calls summed what the call left",
                                        copied.c_str(), facts.data_ok, cases));
}

TUTORIAL_SECTION(memcpy_memset, run_memcpy_memset);
TUTORIAL_CHILD(managed_copies, child_managed_copies);
