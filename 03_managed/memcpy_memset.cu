// Section `memcpy_memset`: cudaMemcpy and cudaMemset on managed memory.
#include "common/buffer.hpp"
#include "common/check.hpp"
#include "common/child.hpp"
#include "common/patterns.hpp"
#include "common/report.hpp"
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
        "\nWith managed memory the kind is a hint about which side should access it: a\n"
        "*ToDevice or DeviceTo* kind makes the device access the managed side, HostTo*/*ToHost\n"
        "the host (when it may). On a system with concurrentManagedAccess = 1 both are always\n"
        "allowed, so every kind works; only the pageable partner is refused where a kind\n"
        "claims it is device memory. cudaMemset is always done by the device.\n\n");
    ctx.claim(tutorial::observed(
        "on managed memory every cudaMemcpyKind copies; only a kind calling pageable memory "
        "device memory is refused",
        copies_ok, "the child " + child.describe(),
        "concurrentManagedAccess = 0 here, so a kind may not send the wrong side to the pages"));
    ctx.claim(tutorial::observed(
        "cudaMemset and cudaMemsetAsync fill managed memory the CPU touched first", wrong == 0,
        tutorial::format("%zu of %zu bytes wrong", wrong, bytes),
        "the host read before the asynchronous memset finished"));
    return ctx.verdict(copies_ok && wrong == 0,
                       "all 20 kind/direction pairs behaved as expected and both memsets "
                       "landed, checked on the CPU");
}
