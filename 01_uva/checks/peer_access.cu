// Checks of section peer_access: runs ../peer_access.cu for every ordered pair of GPUs and the
// shared counter; its refused calls, and a kernel using a peer's pointer before access is enabled,
// in child processes; prints the table and states the lesson as claims.
#include "01_uva/peer_access.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::ChildResult;

namespace {

constexpr std::size_t count = 16 << 20;  // 64 MiB of 32-bit words per GPU

struct PeerResult {
    Found found;            // the walkthrough: every ordered pair, and the shared counter
    ChildResult refusals;   // child: one line per call, "<call> -> <result>"
    ChildResult too_early;  // child: a kernel using the peer pointer without peer access
};

PeerResult measure_peer_access(int gpus, int home_device) {
    PeerResult r;
    r.refusals = tutorial::run_child("peer_refusals", {"0", "1"});
    r.too_early = tutorial::run_child("peer_read_too_early", {"0", "1"});
    r.found = walkthrough(gpus, count);
    CUDA_CHECK(cudaSetDevice(home_device));
    return r;
}

// The calls of the child `peer_refusals`, as it prints them.
constexpr const char* can_itself = "cudaDeviceCanAccessPeer(&can, a, a)";
constexpr const char* disable_never_enabled = "cudaDeviceDisablePeerAccess(b), never enabled";
constexpr const char* enable_itself = "cudaDeviceEnablePeerAccess(a, 0), its own device";
constexpr const char* enable_first = "cudaDeviceEnablePeerAccess(b, 0)";
constexpr const char* enable_again = "cudaDeviceEnablePeerAccess(b, 0) again";

// The refused calls: two codes the entries list for their cases, and the refusal for one's own
// device, whose code the Runtime and Driver API entries disagree on. Returns whether the two
// codes came as listed.
bool report_refusals(tutorial::Context& ctx, const ChildResult& child) {
    const std::string not_enabled = tutorial::child_answer(child, disable_never_enabled);
    const std::string first = tutorial::child_answer(child, enable_first);
    const std::string again = tutorial::child_answer(child, enable_again);
    const std::string itself = tutorial::child_answer(child, enable_itself);
    const std::string can = tutorial::child_answer(child, can_itself);
    ctx.claim(tutorial::documented_error(
        "disable_never_enabled", "disabling peer access that was never enabled is refused",
        not_enabled, "cudaErrorPeerAccessNotEnabled",
        "the driver kept no record of which peers are enabled",
        tutorial::Entry{"Runtime API reference: cudaDeviceDisablePeerAccess",
                        "cudaErrorPeerAccessNotEnabled not enabled", "returns"}));
    ctx.claim(tutorial::documented_error(
                  "enable_twice", "enabling peer access twice is refused", again,
                  "cudaErrorPeerAccessAlreadyEnabled",
                  "the driver kept no record of which peers are enabled",
                  tutorial::Entry{"Runtime API reference: cudaDeviceEnablePeerAccess",
                                  "cudaErrorPeerAccessAlreadyEnabled already", "returns"}),
              first == "cudaSuccess" ? ""
                                     : "the first cudaDeviceEnablePeerAccess(b, 0) returned " +
                                           first + ", so the second was not a second one");
    // The entry refuses the call where cudaDeviceCanAccessPeer says the current device cannot
    // reach peerDevice, which it says of a device and itself: the refusal is documented. Its
    // code is cudaErrorInvalidDevice there and others in the Driver API's entry (the next claim,
    // which is observed), so any error counts here.
    const bool refused = itself != "cudaSuccess" && itself.rfind("cudaError", 0) == 0;
    ctx.claim(
        tutorial::documented(
            "own_device_refused", "enabling peer access to one's own device is refused", refused,
            "cudaDeviceCanAccessPeer(&can, a, a) gave " + can + "; the call returned " + itself,
            "the driver enabled peer access from a device to itself",
            tutorial::Entry{"Runtime API reference: cudaDeviceEnablePeerAccess",
                            "cudaDeviceCanAccessPeer cannot", "returns"}),
        can == "0" ? ""
                   : "cudaDeviceCanAccessPeer(&can, a, a) gave " + can +
                         ", so the entry promises no refusal");
    // The references disagree on the code. The Runtime API's cudaDeviceEnablePeerAccess returns
    // cudaErrorInvalidDevice where cudaDeviceCanAccessPeer says the current device cannot reach
    // peerDevice. The Driver API's cuCtxEnablePeerAccess returns CUDA_ERROR_PEER_ACCESS_UNSUPPORTED
    // in that case (the runtime's cudaErrorPeerAccessUnsupported), and CUDA_ERROR_INVALID_CONTEXT
    // where the current context is peerContext, as it is here: device a's primary context is both.
    // Driver 580 returns cudaErrorPeerAccessUnsupported, the Driver API's first code: with three
    // codes for one case, the code is observed.
    ctx.claim(tutorial::observed(
        "own_device_code",
        "for one's own device cudaDeviceEnablePeerAccess returns cudaErrorPeerAccessUnsupported, "
        "one of the two codes the Driver API entry gives for this case, not the Runtime API "
        "entry's cudaErrorInvalidDevice",
        itself == "cudaErrorPeerAccessUnsupported", "returned " + itself,
        "the references disagree on the code: the cudaDeviceEnablePeerAccess entry returns "
        "cudaErrorInvalidDevice where cudaDeviceCanAccessPeer says 0, as it does for a device "
        "and itself; the cuCtxEnablePeerAccess entry returns CUDA_ERROR_PEER_ACCESS_UNSUPPORTED "
        "where cuDeviceCanAccessPeer says 0, and CUDA_ERROR_INVALID_CONTEXT where the current "
        "context is peerContext; which one a driver returns is its choice"));
    // The refusal for one's own device is a claim above, which fails the section if it does not
    // hold; its code is observed, so the result does not read that answer.
    return not_enabled == "cudaErrorPeerAccessNotEnabled" &&
           (first != "cudaSuccess" || again == "cudaErrorPeerAccessAlreadyEnabled");
}

tutorial::Result report_peer_claims(tutorial::Context& ctx, const PeerResult& r, int can,
                                    int read_ok, bool atomics_everywhere) {
    const int pairs = static_cast<int>(r.found.pairs.size());
    const bool read_held = can > 0 && read_ok == can;
    ctx.claim(
        // The entry: on success, all allocations from peerDevice will be accessible by the
        // current device at once.
        tutorial::documented(
            "peer_read_in_place",
            "where cudaDeviceCanAccessPeer = 1, a kernel reads the peer's memory in place once "
            "peer access is on",
            read_held, tutorial::format("%d of %d pairs read every value right", read_ok, can),
            "the kernel's reads through the peer pointer did not reach the peer's memory: "
            "see the table's last column",
            tutorial::Entry{"Runtime API reference: cudaDeviceEnablePeerAccess", "peerDevice",
                            "will"}),
        can > 0 ? "" : "no pair of GPUs here can access each other");
    const bool faulted = r.too_early.failed_with("cudaErrorIllegalAddress");
    ctx.claim(tutorial::observed(
        "read_before_enable", "without peer access, a kernel using another GPU's pointer fails",
        faulted,
        "the child " + r.too_early.describe() +
            (faulted ? ": cudaErrorIllegalAddress" : ", not with cudaErrorIllegalAddress"),
        "the entries promise a peer's memory only after cudaDeviceEnablePeerAccess and name no "
        "error for a kernel that uses it before: what happens is undefined"));
    const bool refusals_held = report_refusals(ctx, r.refusals);
    const bool added_up = r.found.counter.total == r.found.counter.expected;
    // The Guide's Atomic Functions: atomicAdd_system is atomic with respect to the other GPUs
    // and CPUs of the system (where the link has native atomics,
    // cudaDevP2PAttrNativeAtomicSupported).
    ctx.claim(tutorial::documented(
                  "system_atomics_exact",
                  "system-scope atomics from every GPU on one counter add up exactly", added_up,
                  tutorial::format("%llu of %llu", r.found.counter.total, r.found.counter.expected),
                  "an addition was lost: the atomics are not atomic across GPUs here",
                  tutorial::Entry{"Programming Guide, Atomic Functions", "atomicAdd_system", "is"}),
              atomics_everywhere ? "" : "a GPU here has no native atomics to GPU 0");
    return ctx.verdict(read_held && refusals_held && (added_up || !atomics_everywhere),
                       tutorial::format("%d ordered pairs of %d GPUs read through peer pointers, "
                                        "the refusals the entries list, and the shared counter",
                                        pairs, tutorial::device_count()));
}

}  // namespace

// Child role: the peer-access calls that are refused, each with the result it returns (args: the
// two GPUs). One line per call, "<call> -> <result>", which the parent reads back.
int child_peer_refusals(const std::vector<std::string>& args) {
    const Refusals r = refused_calls(std::atoi(args.at(0).c_str()), std::atoi(args.at(1).c_str()));
    if (r.asked == cudaSuccess) {
        std::printf("%-52s -> %d\n", can_itself, r.can);
    } else {
        std::printf("%-52s -> %s\n", can_itself, cudaGetErrorName(r.asked));
    }
    std::printf("%-52s -> %s\n", disable_never_enabled, cudaGetErrorName(r.never_enabled));
    std::printf("%-52s -> %s\n", enable_itself, cudaGetErrorName(r.itself));
    std::printf("%-52s -> %s\n", enable_first, cudaGetErrorName(r.first));
    std::printf("%-52s -> %s\n", enable_again, cudaGetErrorName(r.again));
    return 0;
}

// Child role: the lesson's mistake, a kernel on GPU a copying GPU b's buffer through its pointer
// with no peer access. Where it fails, CUDA_CHECK_LAUNCH_SYNC reports what happened and ends the
// child.
int child_peer_read_too_early(const std::vector<std::string>& args) {
    const int a = std::atoi(args.at(0).c_str());
    const int b = std::atoi(args.at(1).c_str());
    std::printf("a kernel on GPU %d reads GPU %d's buffer, without peer access...\n", a, b);
    std::fflush(stdout);
    read_without_peer_access(a, b, count);
    std::printf("the kernel finished\n");
    return 0;
}

tutorial::Result run_peer_access(tutorial::Context& ctx) {
    const int gpus = tutorial::device_count();
    if (gpus < 2) return ctx.skip(tutorial::format("needs 2 GPUs; this machine has %d", gpus));
    // Without peer access, enabling it (or a peer read) would stop the run: say why instead.
    const std::string no_peer = tutorial::why_no_peer_access(gpus);
    if (!no_peer.empty()) return ctx.skip(no_peer);
    std::printf(
        "%d GPUs. Each gets a %s buffer from cudaMalloc. For every ordered pair, a kernel on\n"
        "the first GPU copies the second GPU's buffer through its pointer, after\n"
        "cudaDeviceEnablePeerAccess; the failures run in child processes.\n\n",
        gpus, tutorial::format_bytes(count * sizeof(std::uint32_t)).c_str());
    const PeerResult r = measure_peer_access(gpus, ctx.device);

    tutorial::Table table({{"kernel on"},
                           {"memory of"},
                           {"cudaDeviceCanAccessPeer", tutorial::Align::right},
                           {"performance rank", tutorial::Align::right},
                           {"native atomics", tutorial::Align::right},
                           {"read through the pointer"}});
    int can = 0;
    int read_ok = 0;
    bool atomics_everywhere = true;
    for (const PairFacts& p : r.found.pairs) {
        can += p.can_access;
        read_ok += p.can_access && p.wrong == 0 ? 1 : 0;
        if (p.to == 0) atomics_everywhere = atomics_everywhere && p.native_atomics == 1;
        table.add_row({"GPU " + std::to_string(p.from), "GPU " + std::to_string(p.to),
                       std::to_string(p.can_access), std::to_string(p.rank),
                       std::to_string(p.native_atomics),
                       p.can_access ? tutorial::format("%zu of %zu values wrong", p.wrong, count)
                                    : "not tried"});
    }
    table.print();
    std::printf("\nRefused calls, GPU 0 (a) and GPU 1 (b), in a child process:\n");
    tutorial::print_child_output(r.refusals);
    std::printf("   The child %s.\n\nWithout peer access, in a child process:\n",
                r.refusals.describe().c_str());
    tutorial::print_child_output(r.too_early);
    std::printf("   The child %s.\n\n", r.too_early.describe().c_str());
    std::printf(
        "Every GPU at once adds 1 to a counter in GPU 0's memory %d times per thread\n"
        "(atomicAdd_system), one block per SM of each GPU: %llu, expected %llu.\n\n",
        adds_per_thread, r.found.counter.total, r.found.counter.expected);
    std::printf(
        "Unified addressing gives every allocation one address for every GPU; peer access is\n"
        "what lets another GPU's kernels use it. cudaDeviceEnablePeerAccess maps all of the\n"
        "peer's cudaMalloc memory, present and future, for the current device, one direction\n"
        "at a time. The reference names the codes for disabling what was never enabled and for\n"
        "enabling twice. For one's own device (which cudaDeviceCanAccessPeer says it cannot\n"
        "reach) it refuses the call but disagrees on the code: cudaErrorInvalidDevice in the\n"
        "Runtime API, CUDA_ERROR_PEER_ACCESS_UNSUPPORTED or CUDA_ERROR_INVALID_CONTEXT in the\n"
        "Driver API; the code above is the one this driver chose. A kernel using a peer's\n"
        "pointer before access is enabled is outside the contract: the child's fault is what\n"
        "%s did, not a rule.\n\n",
        tutorial::this_driver().c_str());
    return report_peer_claims(ctx, r, can, read_ok, atomics_everywhere);
}

TUTORIAL_SECTION(peer_access, run_peer_access);
TUTORIAL_CHILD(peer_refusals, child_peer_refusals);
TUTORIAL_CHILD(peer_read_too_early, child_peer_read_too_early);
