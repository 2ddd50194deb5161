// Checks of section peer_access_control: runs the walkthrough of ../peer_access_control.cu for
// several numbers of GPU 1's allocations, round after round, timing peer access against one VMM
// grant; in a child, GPU 0 reads a granted and a not granted VMM allocation, peer access enabled.
#include "06_vmm/peer_access_control.cu"

#include "common/device.hpp"
#include "common/driver.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

#include <cstdint>
#include <string>

using tutorial::format;

namespace {

// Medians over `rounds` rounds, each a walkthrough per count (the counts interleaved that way).
struct Costs {
    std::vector<double> enable_ms, disable_ms, grant_ms;  // by index in the counts
    Found last;
};

Costs time_rounds(const std::vector<int>& counts, int rounds) {
    tutorial::StepTimes times;
    Costs c;
    for (int r = 0; r < rounds; ++r)
        for (const int count : counts) c.last = walkthrough(count);
    const std::vector<double> enable = times.host_ms(peer_on);
    const std::vector<double> disable = times.host_ms(peer_off);
    const std::vector<double> grant = times.host_ms(one_granted);
    const std::size_t k_counts = counts.size();
    for (std::size_t k = 0; k < k_counts; ++k) {
        std::vector<double> e, d, g;
        for (int r = 0; r < rounds; ++r) {
            e.push_back(enable[r * k_counts + k]);
            d.push_back(disable[r * k_counts + k]);
            g.push_back(grant[r * k_counts + k]);
        }
        c.enable_ms.push_back(tutorial::median(e));
        c.disable_ms.push_back(tutorial::median(d));
        c.grant_ms.push_back(tutorial::median(g));
    }
    return c;
}

double enable_growth(const Costs& c) {
    return c.enable_ms.back() / c.enable_ms.front();
}
double grant_gain(const Costs& c) {
    return c.enable_ms.back() / c.grant_ms.back();
}

// The Guide's E.7: VMM's access control lets the user choose (允许) which allocations are shared
// with the system's peer devices, where cudaEnablePeerAccess maps every cudaMalloc allocation to
// the peer.
// E.7: cuMemSetAccess grants (允许) a device access to a mapped range. What the range not granted
// is with peer access enabled is left open: E.7 says a mapping made with cuMemMap alone does not
// make the addresses accessible, but speaks of no peer access, while the cudaDeviceEnablePeerAccess
// entry says all allocations from the peer will immediately be accessible.
const tutorial::Entry granted_access{"Programming Guide, E.7 Control Access Rights",
                                     "cuMemSetAccess", "允许"};
constexpr const char* peer_access_open =
    "E.7 says a range mapped with cuMemMap is not accessible (and a kernel touching it crashes "
    "the program) until cuMemSetAccess grants it, but not what peer access changes, and the "
    "cudaDeviceEnablePeerAccess entry says all allocations from the peer will immediately be "
    "accessible: the two leave this case open";

// What the grant opens, and what it leaves closed (E.7).
void claim_access(tutorial::Context& ctx, bool read_granted, bool access_as_granted) {
    ctx.claim(tutorial::documented(
        "granted_open", "the peer reads the VMM allocation granted to it with cuMemSetAccess",
        read_granted, format("the granted one read %s", read_granted ? "right" : "WRONG"),
        "the grant did not work", granted_access));
    ctx.claim(tutorial::observed(
        "only_granted_open",
        "...and only that one is open to it, even with peer access enabled (cuMemGetAccess)",
        access_as_granted,
        format("cuMemGetAccess: %s", access_as_granted
                                         ? "granted PROT_READWRITE, not granted PROT_NONE"
                                         : "other flags (see the child's line)"),
        peer_access_open));
}

}  // namespace

// What cuMemGetAccess answers for `user` on the range at `address`: its flags, or its error (what
// it says for a range not granted is open, and an error must not end the child).
std::string access_answer(CUdeviceptr address) {
    const auto cuMemGetAccess = DRIVER_FUNCTION(cuMemGetAccess);
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = user;
    unsigned long long flags = 0;
    const CUresult result = cuMemGetAccess(&flags, &location, address);
    return result == CUDA_SUCCESS ? tutorial::vmm_access_name(flags)
                                  : tutorial::driver_error_name(result);
}

// Child role: the lesson's mistake. A kernel on GPU 0 reads the granted range (checked) first;
// then cuMemGetAccess reports GPU 0's access to each range; then the kernel reads the other: on
// this driver the check reports the fault and ends the child.
int child_peer_vmm_grant(const std::vector<std::string>&) {
    const TwoRanges r = grant_one_of_two();
    std::printf("GPU %d read the granted allocation: %zu of %zu values wrong\n", user,
                user_reads(r.granted, r.bytes), r.bytes / sizeof(std::uint32_t));
    std::fflush(stdout);
    std::printf("cuMemGetAccess for GPU %d, peer access enabled: granted %s, not granted %s\n",
                user, access_answer(r.granted).c_str(), access_answer(r.not_granted).c_str());
    std::printf("GPU %d reads the allocation it was not granted, peer access enabled...\n", user);
    std::fflush(stdout);
    user_reads(r.not_granted, r.bytes);
    std::printf("the read went through\n");
    return 0;
}

tutorial::Result run_peer_access_control(tutorial::Context& ctx) {
    const int gpus = tutorial::device_count();
    if (gpus < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", gpus));
    // Without peer access, enabling it (or a peer read) would stop the run: say why instead.
    const std::string no_peer = tutorial::why_no_peer_access(gpus);
    if (!no_peer.empty()) return ctx.skip(no_peer);
    if (!tutorial::vmm_supported(owner)) return ctx.skip("VMM is not supported on this device");
    const std::vector<int> counts =
        ctx.quick() ? std::vector<int>{0, 64, 512} : std::vector<int>{0, 64, 256, 1024};
    const int rounds = 5;
    std::printf(
        "GPU %d gets cudaMalloc allocations of 2 MiB, up to %d. At each count, with GPU %d\n"
        "current, cudaDeviceEnablePeerAccess(%d) and cudaDeviceDisablePeerAccess(%d) are timed,\n"
        "then cuMemSetAccess granting GPU %d one VMM allocation on GPU %d (medians of %d rounds,\n"
        "the counts interleaved).\n\n",
        owner, counts.back(), user, owner, owner, user, owner, rounds);
    walkthrough(0);  // both contexts, and the first grant's one-time costs, before any timing
    const Costs c = time_rounds(counts, rounds);
    const tutorial::ChildResult child = tutorial::run_child("peer_vmm_grant", {});
    CUDA_CHECK(cudaSetDevice(ctx.device));

    tutorial::Table table({{"GPU 1's cudaMalloc allocations", tutorial::Align::right},
                           {"EnablePeerAccess ms", tutorial::Align::right},
                           {"DisablePeerAccess ms", tutorial::Align::right},
                           {"cuMemSetAccess ms", tutorial::Align::right}});
    for (std::size_t k = 0; k < counts.size(); ++k) {
        table.add_row({format("%d", counts[k]), format("%.3f", c.enable_ms[k]),
                       format("%.3f", c.disable_ms[k]), format("%.3f", c.grant_ms[k])});
    }
    table.print();
    std::printf(
        "\nIn a child process, two VMM allocations on GPU %d, only the first granted to GPU %d:\n",
        owner, user);
    tutorial::print_child_output(child);
    std::printf(
        "   The child %s.\n\n"
        "Peer access is all or nothing, for every allocation of the peer; VMM access is granted\n"
        "per range and per device, so its cost and its reach are the allocation's own.\n\n",
        child.describe().c_str());
    const auto again = [&] { return time_rounds(counts, rounds); };
    ctx.claim(tutorial::at_least("enable_grows",
                                 "cudaDeviceEnablePeerAccess costs more the more the peer has "
                                 "allocated (most allocations / none)",
                                 enable_growth(c), 3.0, "x",
                                 "the driver maps the peer's memory lazily, or in pieces too "
                                 "large to count")
                  .again([&] { return enable_growth(again()); }));
    ctx.claim(tutorial::at_least("grant_cheaper",
                                 "granting one VMM allocation costs far less than enabling peer "
                                 "access to all of them (enable / grant)",
                                 grant_gain(c), 3.0, "x",
                                 "the grant took as long as mapping everything")
                  .again([&] { return grant_gain(again()); }));
    const bool read_granted =
        child.output.find("the granted allocation: 0 of ") != std::string::npos;
    const bool access_as_granted =
        child.output.find("granted PROT_READWRITE, not granted PROT_NONE") != std::string::npos;
    const bool faulted = child.failed_with("cudaErrorIllegalAddress");
    claim_access(ctx, read_granted, access_as_granted);
    ctx.claim(tutorial::observed(
        "not_granted_faults",
        "...and a peer kernel reading the one not granted fails with cudaErrorIllegalAddress",
        faulted, "the child " + child.describe() + (faulted ? ", cudaErrorIllegalAddress" : ""),
        peer_access_open));
    return ctx.verdict(read_granted,
                       "GPU 0 read the granted allocation right with peer access enabled");
}

TUTORIAL_SECTION(peer_access_control, run_peer_access_control);
TUTORIAL_CHILD(peer_vmm_grant, child_peer_vmm_grant);
