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
// cudaMemcpy and cudaMemset take managed pointers like any others, under any kind. The question
// is where the managed side's pages are afterwards: the runtime uses the GPU or the CPU for it.
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

// The runtime refuses a kind that claims a pageable pointer is device memory (chapter 01);
// managed and device memory are accepted under every kind on a system with unified addressing.
bool claims_pageable_is_device(MemoryKind from, MemoryKind to, cudaMemcpyKind kind) {
    const bool source_device_side =
        kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    const bool destination_device_side =
        kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    return (from == MemoryKind::pageable && source_device_side) ||
           (to == MemoryKind::pageable && destination_device_side);
}

// Part 3: which processor the runtime uses for the managed side of a copy or a memset. Afterwards
// a kernel reads the buffer twice: where the GPU touched the pages, they are in device memory and
// the first read is as fast as the second; where the CPU touched them, the first read must fault
// them over to the GPU, and takes many times longer.
constexpr std::size_t side_count = 16 << 20;  // 64 MiB of 32-bit words
constexpr std::size_t side_bytes = side_count * sizeof(std::uint32_t);
constexpr std::uint32_t side_seed = 7;
constexpr double faulted_ratio = 10.0;  // first read / second read from here on: the pages moved


struct SideCase {
    const char* call;
    Operation operation;
    cudaMemcpyKind kind;        // for the copies
    bool appendix_says_device;  // the Unified Memory appendix's rule for this kind and side
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
    int as_appendix_says = 0;
    int data_ok = 0;
};

SideCounts print_sides(const std::vector<SideResult>& results) {
    tutorial::Table table({{"call"},
                           {"managed side"},
                           {"appendix: accessed by"},
                           {"1st read", tutorial::Align::right},
                           {"2nd read", tutorial::Align::right},
                           {"so touched by"},
                           {"data"}});
    SideCounts counts;
    for (const SideResult& r : results) {
        const bool agrees = r.gpu_touched == r.c.appendix_says_device;
        counts.as_appendix_says += agrees ? 1 : 0;
        counts.data_ok += r.data_ok ? 1 : 0;
        const bool source = r.c.operation == Operation::copy_from;
        table.add_row(
            {r.c.call, source ? "source" : "destination",
             r.c.appendix_says_device ? "the GPU" : "the CPU",
             tutorial::format("%.3f ms", r.first_ms), tutorial::format("%.3f ms", r.second_ms),
             std::string(r.gpu_touched ? "the GPU" : "the CPU") + (agrees ? "" : "  (DIFFERS)"),
             r.data_ok ? "ok" : "WRONG"});
    }
    table.print();
    return counts;
}

}  // namespace

// Child role: copies to and from managed memory under every cudaMemcpyKind. A child, because
// some combinations are refused with an error (and a sanitizer would count those as failures).
int child_managed_copies(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const MemoryKind partners[] = {MemoryKind::device, MemoryKind::pageable};
    int unexpected = 0;
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
                const Buffer managed(MemoryKind::managed, bytes);
                const Buffer other(partner, bytes);
                const Buffer& source = from_managed ? managed : other;
                const Buffer& destination = from_managed ? other : managed;
                fill(source, count, seed);
                fill(destination, count, ~seed);
                const cudaError_t status =
                    cudaMemcpy(destination.get(), source.get(), bytes, k.kind);
                (void)cudaGetLastError();
                const bool arrived = mismatches(destination, count, seed) == 0;
                const bool refused =
                    claims_pageable_is_device(source.kind(), destination.kind(), k.kind);
                const bool as_expected = refused ? status == cudaErrorInvalidValue && !arrived
                                                 : status == cudaSuccess && arrived;
                unexpected += as_expected ? 0 : 1;
                std::printf("  %-21s", status == cudaSuccess ? (arrived ? "ok" : "WRONG DATA")
                                                             : cudaGetErrorName(status));
                if (!as_expected) std::printf("(UNEXPECTED)");
                ++seed;
            }
        }
        std::printf("\n");
    }
    return unexpected == 0 ? 0 : 3;
}

tutorial::Result run_memcpy_memset(tutorial::Context& ctx) {
    std::printf("1. cudaMemcpy of %s to and from managed memory under every kind (in a child):\n",
                tutorial::format_bytes(bytes).c_str());
    const tutorial::ChildResult child =
        tutorial::run_child("managed_copies", {std::to_string(ctx.device)});
    tutorial::print_child_output(child);
    std::printf("   The child %s.\n", child.describe().c_str());
    const bool copies_ok = child.succeeded();

    std::printf("\n2. cudaMemset on managed memory, first touched by the CPU:\n");
    const Buffer managed(MemoryKind::managed, bytes);
    std::uint8_t* p = managed.as<std::uint8_t>();
    for (std::size_t i = 0; i < bytes; ++i) p[i] = 0x11;
    CUDA_CHECK(cudaMemset(p, 0xab, bytes / 2));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMemsetAsync(p + bytes / 2, 0xcd, bytes / 2, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < bytes; ++i) wrong += p[i] != (i < bytes / 2 ? 0xab : 0xcd);
    std::printf(
        "   cudaMemset (first half, 0xab) and cudaMemsetAsync + cudaStreamSynchronize (second\n"
        "   half, 0xcd): %zu of %zu bytes wrong when the CPU reads them back.\n",
        wrong, bytes);
    std::printf(
        "\n3. Who touched the managed side? A fresh %s managed buffer per call (as a source,\n"
        "   filled by the CPU first); then a kernel sums it twice. A first read %.0fx slower\n"
        "   than the second had to move the pages over: the CPU had touched them.\n",
        tutorial::format_bytes(side_bytes).c_str(), faulted_ratio);
    const std::vector<SideResult> sides = measure_sides();
    const SideCounts counts = print_sides(sides);
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    std::printf(
        "\nWith managed memory the kind says how to treat the managed side: *ToDevice or\n"
        "DeviceTo* makes the GPU access it, HostTo* or *ToHost the CPU (where the CPU may\n"
        "touch it at that moment), Default the GPU. cudaMemset is always done by the GPU.\n"
        "Every kind still copies the data; only a pageable partner is refused where a kind\n"
        "claims it is device memory.\n\n");
    ctx.claim(tutorial::observed(
        "on managed memory every cudaMemcpyKind copies; only a kind calling pageable memory "
        "device memory is refused",
        copies_ok, "the child " + child.describe(),
        "concurrentManagedAccess = 0 here, so a kind may not send the wrong side to the pages"));
    ctx.claim(tutorial::observed(
        "cudaMemset and cudaMemsetAsync fill managed memory the CPU touched first", wrong == 0,
        tutorial::format("%zu of %zu bytes wrong", wrong, bytes),
        "the host read before the asynchronous memset finished"));
    const int cases = static_cast<int>(sides.size());
    // Seen through timing, so not judged under compute-sanitizer.
    tutorial::Claim by_kind = tutorial::observed(
        "the cudaMemcpyKind decides which processor touches managed memory, as the appendix says",
        counts.as_appendix_says == cases,
        tutorial::format("%d of %d calls", counts.as_appendix_says, cases),
        "see the rows marked DIFFERS");
    by_kind.evidence = tutorial::Evidence::timing;
    ctx.claim(by_kind, concurrent ? ""
                                  : "concurrentManagedAccess = 0 here: whether the CPU may touch "
                                    "the pages depends on what else the GPU runs");
    return ctx.verdict(copies_ok && wrong == 0 && counts.data_ok == cases,
                       tutorial::format("all 20 kind/direction pairs behaved as expected, both "
                                        "memsets landed (checked on the CPU), and %d of %d "
                                        "kernel sums after part 3's calls were right",
                                        counts.data_ok, cases));
}
