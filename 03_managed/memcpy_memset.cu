// Section `memcpy_memset`: cudaMemcpy and cudaMemset on managed memory.
#include "common/buffer.hpp"
#include "common/check.hpp"
#include "common/child.hpp"
#include "common/device.hpp"
#include "common/patterns.hpp"
#include "common/report.hpp"
#include "common/timing.hpp"
#include "sections.hpp"

#include <cstdint>
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

// The managed buffer is the destination of a copy, its source, or set by cudaMemset.
enum class Operation { copy_into, copy_from, memset };

// lesson:begin
// cudaMemcpy and cudaMemset take managed pointers under any kind: for the managed side the kind
// only says whether the runtime reaches it from the CPU or from the GPU (the Unified Memory
// appendix, N.2.2.7). The kind must still name the other buffer as the memory it is.
void operate(Operation operation, std::uint32_t* managed, std::uint32_t* pinned, std::size_t bytes,
             cudaMemcpyKind kind) {
    switch (operation) {
        case Operation::copy_into: CUDA_CHECK(cudaMemcpy(managed, pinned, bytes, kind)); break;
        case Operation::copy_from: CUDA_CHECK(cudaMemcpy(pinned, managed, bytes, kind)); break;
        case Operation::memset: CUDA_CHECK(cudaMemset(managed, 0, bytes)); break;
    }
    CUDA_CHECK(cudaDeviceSynchronize());
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

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

// Part 3: which processor the runtime uses for the managed side of a copy or a memset. N.2.2.7
// says which one reaches it; where the pages are afterwards is the driver's choice. Here a kernel
// reads the buffer twice: where the pages stayed in device memory, the first read is as fast as
// the second; where they are in host memory, the first read must fault them over to the GPU and
// takes many times longer. On this driver the pages stayed with the processor that wrote or read
// them (observed on driver 580.159.04). The partner is pinned memory, which a system with unified
// addressing lets both processors reach at the same address, so every kind names it rightly.
constexpr std::size_t side_count = 16 << 20;  // 64 MiB of 32-bit words
constexpr std::size_t side_bytes = side_count * sizeof(std::uint32_t);
constexpr std::uint32_t side_seed = 7;
constexpr double faulted_ratio = 10.0;  // first read / second read from here on: the pages moved

struct SideCase {
    const char* call;
    Operation operation;
    cudaMemcpyKind kind;       // for the copies
    bool n227_says_device;     // N.2.2.7: the GPU reaches the managed side (else the CPU)
};

struct SideResult {
    SideCase c;
    double first_ms = 0.0;  // the first kernel read after the call
    double second_ms = 0.0;
    bool gpu_touched = false;
    bool data_ok = false;  // the first read's sum is what the call should have left there
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

// A kernel sums the buffer (events around the kernel only).
double timed_sum(const std::uint32_t* data, unsigned long long* sum, std::uint64_t& result) {
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    tutorial::EventTimer timer;
    timer.start();
    sum_on_device_async(data, side_count, sum, nullptr);
    timer.stop();
    const double ms = timer.elapsed_ms();
    unsigned long long value = 0;
    CUDA_CHECK(cudaMemcpy(&value, sum, sizeof value, cudaMemcpyDeviceToHost));
    result = value;
    return ms;
}

// A fresh managed buffer; as a source, filled by the CPU first, so its pages start on the host.
SideResult touched_by(const SideCase& c, std::uint32_t* pinned, unsigned long long* sum) {
    std::uint32_t* managed = nullptr;
    CUDA_CHECK(cudaMallocManaged(&managed, side_bytes));
    if (c.operation == Operation::copy_from) fill_on_host(managed, side_count, side_seed);
    operate(c.operation, managed, pinned, side_bytes, c.kind);
    SideResult r{c};
    std::uint64_t first_sum = 0;
    std::uint64_t second_sum = 0;
    r.first_ms = timed_sum(managed, sum, first_sum);
    r.second_ms = timed_sum(managed, sum, second_sum);
    CUDA_CHECK(cudaFree(managed));
    r.gpu_touched = r.first_ms < faulted_ratio * r.second_ms;
    const std::uint64_t expected =
        c.operation == Operation::memset ? 0 : pattern_sum(side_count, side_seed);
    r.data_ok = first_sum == expected && second_sum == expected;
    return r;
}

std::vector<SideResult> measure_sides() {
    std::uint32_t* pinned = nullptr;
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, side_bytes));
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    fill_on_host(pinned, side_count, side_seed);
    std::uint64_t warm_up = 0;
    timed_sum(pinned, sum, warm_up);  // loads the kernel, so that no case pays for that
    std::vector<SideResult> results;
    for (const SideCase& c : side_cases) results.push_back(touched_by(c, pinned, sum));
    CUDA_CHECK(cudaFree(sum));
    CUDA_CHECK(cudaFreeHost(pinned));
    return results;
}

struct SideCounts {
    int as_n227_says = 0;
    int data_ok = 0;
};

SideCounts print_sides(const std::vector<SideResult>& results) {
    tutorial::Table table({{"call"},
                           {"managed side"},
                           {"N.2.2.7: reached by"},
                           {"1st read", tutorial::Align::right},
                           {"2nd read", tutorial::Align::right},
                           {"pages were with"},
                           {"data"}});
    SideCounts counts;
    for (const SideResult& r : results) {
        const bool agrees = r.gpu_touched == r.c.n227_says_device;
        counts.as_n227_says += agrees ? 1 : 0;
        counts.data_ok += r.data_ok ? 1 : 0;
        const bool source = r.c.operation == Operation::copy_from;
        table.add_row(
            {r.c.call, source ? "source" : "destination",
             r.c.n227_says_device ? "the GPU" : "the CPU",
             tutorial::format("%.3f ms", r.first_ms), tutorial::format("%.3f ms", r.second_ms),
             std::string(r.gpu_touched ? "the GPU" : "the CPU") + (agrees ? "" : "  (DIFFERS)"),
             r.data_ok ? "ok" : "WRONG"});
    }
    table.print();
    return counts;
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

// Part 2: cudaMemset and cudaMemsetAsync on managed memory the CPU wrote first. Both may return
// before they are done, so the host synchronizes before it reads (N.2.2.7 asks for that).
std::size_t memsets_on_cpu_touched() {
    const Buffer managed(MemoryKind::managed, bytes);
    std::uint8_t* p = managed.as<std::uint8_t>();
    for (std::size_t i = 0; i < bytes; ++i) p[i] = 0x11;
    CUDA_CHECK(cudaMemset(p, 0xab, bytes / 2));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMemsetAsync(p + bytes / 2, 0xcd, bytes / 2, stream));
    CUDA_CHECK(cudaDeviceSynchronize());  // both: the default stream's memset and `stream`'s
    CUDA_CHECK(cudaStreamDestroy(stream));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < bytes; ++i) wrong += p[i] != (i < bytes / 2 ? 0xab : 0xcd);
    std::printf(
        "   cudaMemset (first half, 0xab) and cudaMemsetAsync (second half, 0xcd), then\n"
        "   cudaDeviceSynchronize: %zu of %zu bytes wrong when the CPU reads them back.\n",
        wrong, bytes);
    return wrong;
}

}  // namespace

tutorial::Result run_memcpy_memset(tutorial::Context& ctx) {
    std::printf("1. cudaMemcpy of %s to and from managed memory under every kind, in two\n"
                "   children. The kinds that name the other buffer as what it is (defined):\n",
                tutorial::format_bytes(bytes).c_str());
    const std::string device = std::to_string(ctx.device);
    const tutorial::ChildResult defined =
        tutorial::run_child("managed_copies", {device, "defined"});
    tutorial::print_child_output(defined);
    std::printf("   The child %s.\n", defined.describe().c_str());
    const std::string copied = tutorial::child_answer(defined, "copied");
    std::printf("   The kinds that name it wrongly, which the cudaMemcpy entry calls undefined:\n"
                "   what this driver did, not judged:\n");
    const tutorial::ChildResult undefined =
        tutorial::run_child("managed_copies", {device, "undefined"});
    tutorial::print_child_output(undefined);
    std::printf("   The child %s.\n", undefined.describe().c_str());
    const std::string as_580 = tutorial::child_answer(undefined, "done as driver");

    std::printf("\n2. cudaMemset on managed memory, first touched by the CPU:\n");
    const std::size_t wrong = memsets_on_cpu_touched();
    std::printf(
        "\n3. Who touched the managed side? A fresh %s managed buffer per call (as a source,\n"
        "   filled by the CPU first); then a kernel sums it twice. A first read %.0fx slower\n"
        "   than the second had to move the pages over: they were in host memory.\n",
        tutorial::format_bytes(side_bytes).c_str(), faulted_ratio);
    const std::vector<SideResult> sides = measure_sides();
    const SideCounts counts = print_sides(sides);
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    std::printf(
        "\nThe Unified Memory appendix (N.2.2.7) gives every kind a meaning for the managed side:\n"
        "*ToDevice or DeviceTo* makes the GPU reach it, HostTo* or *ToHost the CPU (where the\n"
        "CPU may touch it at that moment), Default the GPU; cudaMemset always uses the GPU.\n"
        "The other buffer must still be named as what it is: the cudaMemcpy entry calls a\n"
        "wrong kind undefined, so the second table is only what this driver did. Where\n"
        "the pages stay afterwards is the driver's choice: here, with whoever reached them\n"
        "(observed on driver 580.159.04).\n\n");
    ctx.claim(tutorial::documented(
        "cudaMemcpy copies to and from managed memory under every kind that names the other "
        "buffer rightly",
        defined.succeeded() && copied == "12 of 12", copied + " pairs copied",
        "a copy failed or left wrong data: the child's cells marked UNEXPECTED say which",
        "Programming Guide, N.2.2.7 Memcpy()/Memset() Behavior With Managed Memory"));
    ctx.claim(tutorial::observed(
        "a kind naming device memory as host memory copied anyway; one naming pageable memory as "
        "device memory was refused with cudaErrorInvalidValue",
        undefined.succeeded() && as_580 == "8 of 8",
        undefined.exited ? as_580 + " undefined pairs as before"
                         : "the child " + undefined.describe(),
        "the cudaMemcpy entry calls a kind that does not match the pointers undefined"));
    ctx.claim(tutorial::documented(
        "cudaMemset and cudaMemsetAsync fill managed memory the CPU touched first", wrong == 0,
        tutorial::format("%zu of %zu bytes wrong", wrong, bytes),
        "a memset missed bytes, or the host read before it was done",
        "Programming Guide, N.2.2.7 Memcpy()/Memset() Behavior With Managed Memory"));
    const int cases = static_cast<int>(sides.size());
    // Seen through timing, so not judged under compute-sanitizer.
    ctx.claim(tutorial::observed("after each call the managed pages were with the processor "
                                 "that N.2.2.7 says reaches them",
                                 counts.as_n227_says == cases,
                                 tutorial::format("%d of %d calls", counts.as_n227_says, cases),
                                 "N.2.2.7 says which processor reaches the managed side, not "
                                 "where its pages stay afterwards"),
              concurrent ? tutorial::why_timing_not_judged()
                         : "concurrentManagedAccess = 0 here: whether the CPU may touch the "
                           "pages depends on what else the GPU runs");
    return ctx.verdict(defined.succeeded() && wrong == 0 && counts.data_ok == cases,
                       tutorial::format("%s pairs the reference defines copied, both memsets "
                                        "landed (checked on the CPU), and %d of %d kernel sums "
                                        "after part 3's calls were right",
                                        copied.c_str(), counts.data_ok, cases));
}
