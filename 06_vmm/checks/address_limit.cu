// Checks of section address_limit: runs ../address_limit.cu's walkthrough in fresh child processes,
// first with no limit (the address space a context takes, and every call answering), then under
// RLIMIT_AS limits found by bisection: the least limit a context is created under on this driver,
// what context creation says just below it, and which allocations fail just above it while the
// GPU has its memory free. The parent never lowers its own limit.
#include "06_vmm/address_limit.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

using tutorial::format;

namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

double in_gib(std::size_t bytes) {
    return static_cast<double>(bytes) / (std::size_t{1} << 30);
}

// A child's walkthrough, read back from its "name -> value" lines.
struct Run {
    tutorial::ChildResult child;
    std::size_t before = 0, after = 0, free = 0, total = 0;
    std::string context, device, pinned, managed, reserve;
    std::string limit_set, plain_mmap;  // the child's own check of its limit, before any CUDA call
    bool answered() const { return child.exited && child.exit_code == 0 && !context.empty(); }
    bool has_context() const { return context == "cudaSuccess"; }
};

std::size_t number(const tutorial::ChildResult& child, const char* name) {
    return std::strtoull(tutorial::child_answer(child, name).c_str(), nullptr, 10);
}

Run run_limited(int device, std::size_t limit) {
    Run r;
    r.child = tutorial::run_child("limited", {std::to_string(device), std::to_string(limit)});
    r.before = number(r.child, "VmSize before");
    r.after = number(r.child, "VmSize after");
    r.free = number(r.child, "free bytes");
    r.total = number(r.child, "total bytes");
    const auto answer = [&](const char* call) {
        const std::string a = tutorial::child_answer(r.child, call);
        return a.rfind("(no ", 0) == 0 ? std::string() : a;
    };
    r.limit_set = answer("limit set");
    r.plain_mmap = answer("plain mmap 256 MiB");
    r.context = answer("context");
    r.device = answer("cudaMalloc 256 MiB");
    r.pinned = answer("cudaMallocHost 256 MiB");
    r.managed = answer("cudaMallocManaged 256 MiB");
    r.reserve = answer("cuMemAddressReserve 64 GiB");
    return r;
}

// The least limit (to 64 MiB) under which a child creates its context, between `low` (where it
// failed) and `high` (where it worked); how many children it took.
std::size_t least_limit(int device, std::size_t low, std::size_t high, int& children,
                        bool& all_answered) {
    while (high - low > 64 * MiB && children < 24) {
        const std::size_t middle = (low + (high - low) / 2) / MiB * MiB;
        const Run r = run_limited(device, middle);
        ++children;
        all_answered = all_answered && r.answered();
        (r.has_context() ? high : low) = middle;
    }
    return high;
}

void print_run(const char* what, const Run& r) {
    std::printf("%s: context %s", what, r.context.empty() ? "(no answer)" : r.context.c_str());
    if (r.has_context()) {
        std::printf(", GPU memory free %.1f of %.1f GiB\n", in_gib(r.free), in_gib(r.total));
        std::printf(
            "  cudaMalloc 256 MiB -> %s; cudaMallocHost 256 MiB -> %s;\n"
            "  cudaMallocManaged 256 MiB -> %s; cuMemAddressReserve 64 GiB -> %s\n",
            r.device.c_str(), r.pinned.c_str(), r.managed.c_str(), r.reserve.c_str());
    } else {
        std::printf(" (%s)\n", r.child.describe().c_str());
    }
}

}  // namespace

// Child role: the walkthrough under a limit of argument 2 bytes (0: none), one line per answer.
int child_limited(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    const std::size_t limit = std::strtoull(args.at(1).c_str(), nullptr, 10);
    std::printf("limit -> %zu\n", limit);  // stdout's buffer is made now, before any limit
    std::fflush(stdout);
    if (limit != 0) {
        // The limit's own check, before any CUDA call (the walkthrough sets the same limit
        // again): setrlimit(2) says mmap fails with ENOMEM past it.
        const rlimit lowered{limit, limit};
        std::printf("limit set -> %s\n", setrlimit(RLIMIT_AS, &lowered) == 0 ? "yes" : "NO");
        void* plain =
            mmap(nullptr, block, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        const int error = plain == MAP_FAILED ? errno : 0;
        if (plain != MAP_FAILED) munmap(plain, block);
        std::printf("plain mmap 256 MiB -> %s\n", error == ENOMEM ? "ENOMEM"
                                                  : error == 0    ? "mapped"
                                                                  : std::strerror(error));
        std::fflush(stdout);
    }
    const Found f = walkthrough(device, limit);
    std::printf("VmSize before -> %zu\nVmSize after -> %zu\n", f.before, f.after);
    std::printf("context -> %s\n", cudaGetErrorName(f.context));
    if (f.context != cudaSuccess) return 0;
    std::printf("free bytes -> %zu\ntotal bytes -> %zu\n", f.free, f.total);
    std::printf(
        "cudaMalloc 256 MiB -> %s\ncudaMallocHost 256 MiB -> %s\n"
        "cudaMallocManaged 256 MiB -> %s\ncuMemAddressReserve 64 GiB -> %s\n",
        cudaGetErrorName(f.device), cudaGetErrorName(f.pinned), cudaGetErrorName(f.managed),
        tutorial::driver_error_name(f.reserve));
    return 0;
}

namespace {

// The runs under a limit: at the child's own VmSize (no room for anything new), 1 GiB above what a
// context took, then bisection between them, and one run each side of the least limit found.
struct Limits {
    Run at_start, roomy, below, above;
    bool bracketed = false;
    std::size_t least = 0;
    int children = 0;
    bool all_answered = true;
};

Limits find_limits(int device, const Run& open) {
    Limits l;
    l.at_start = run_limited(device, open.before);
    const std::size_t high = open.after + 1024 * MiB;
    l.roomy = run_limited(device, high);
    l.children = 2;
    l.all_answered = l.at_start.answered() && l.roomy.answered();
    l.bracketed = !l.at_start.has_context() && l.roomy.has_context();
    if (!l.bracketed) {
        l.below = l.at_start;
        l.above = l.roomy;
        return l;
    }
    l.least = least_limit(device, open.before, high, l.children, l.all_answered);
    l.below = run_limited(device, l.least - 64 * MiB);
    l.above = run_limited(device, l.least);
    l.children += 2;
    l.all_answered = l.all_answered && l.below.answered() && l.above.answered();
    return l;
}

void claim_limits(tutorial::Context& ctx, std::size_t taken, const Limits& l) {
    const char* open_text =
        "no CUDA entry says how much address space a context reserves; RLIMIT_AS is Linux's, "
        "and the errors under it are not in the calls' entries";
    ctx.claim(tutorial::observed(
        "context_reserves_space",
        "creating a context grows the process's address space by a GiB or more before any "
        "allocation (VmSize after the first calls - before)",
        taken >= (std::size_t{1} << 30), format("%.2f GiB", in_gib(taken)), open_text));
    ctx.claim(tutorial::observed(
        "context_fails_below", "under a limit just below the least, context creation fails",
        l.bracketed && !l.below.has_context(),
        l.bracketed ? format("least limit %.2f GiB; 64 MiB below it: %s", in_gib(l.least),
                             l.below.context.c_str())
                    : format("no limit was bracketed (at VmSize: %s; 1 GiB above: %s)",
                             l.at_start.context.c_str(), l.roomy.context.c_str()),
        open_text));
    const Run& a = l.above;
    const bool fail_with_memory_free = a.has_context() && a.free >= a.total / 2 &&
                                       a.pinned != "cudaSuccess" && a.managed != "cudaSuccess" &&
                                       a.reserve != "CUDA_SUCCESS";
    ctx.claim(tutorial::observed(
        "allocations_fail_memory_free",
        "just above it the context is made, and allocations that need address space fail with "
        "the GPU's memory free",
        fail_with_memory_free,
        format("%.1f GiB free; cudaMallocHost %s, cudaMallocManaged %s, cuMemAddressReserve %s, "
               "cudaMalloc %s",
               in_gib(a.free), a.pinned.c_str(), a.managed.c_str(), a.reserve.c_str(),
               a.device.c_str()),
        open_text));
    ctx.claim(tutorial::observed(
        "children_answer",
        "under every limit the child answered with error codes rather than crashing or hanging",
        l.all_answered, format("%d children", l.children + 1),
        "what the driver does when the address space runs out is not in any entry"));
}

}  // namespace

tutorial::Result run_address_limit(tutorial::Context& ctx) {
    std::printf(
        "Each run below is the walkthrough in a fresh child process: RLIMIT_AS lowered (where a\n"
        "limit is given) before any CUDA call, then the context, cudaMemGetInfo, and 256 MiB of\n"
        "device, pinned and managed memory and a 64 GiB address range, each given back.\n\n");
    const Run open = run_limited(ctx.device, 0);
    print_run("No limit", open);
    if (!open.answered()) {
        tutorial::print_child_output(open.child);
        return ctx.verdict(false,
                           "with no limit, the child did not answer: " + open.child.describe());
    }
    if (open.device != "cudaSuccess" || open.pinned != "cudaSuccess" ||
        open.managed != "cudaSuccess" || open.reserve != "CUDA_SUCCESS") {
        rlimit inherited{};
        getrlimit(RLIMIT_AS, &inherited);
        return ctx.skip(
            format("with no limit of ours, not every allocation succeeded here (see "
                   "above; RLIMIT_AS as inherited: %s): nothing to compare a limit with",
                   inherited.rlim_cur == RLIM_INFINITY
                       ? "unlimited"
                       : format("%.2f GiB", in_gib(inherited.rlim_cur)).c_str()));
    }
    const std::size_t taken = open.after - open.before;
    std::printf(
        "VmSize %.2f GiB before the first CUDA call, %.2f GiB after: the context took "
        "%.2f GiB of address space.\n\n",
        in_gib(open.before), in_gib(open.after), in_gib(taken));
    const Limits l = find_limits(ctx.device, open);
    if (l.bracketed) {
        std::printf(
            "The least limit a context was created under: %.2f GiB (to 64 MiB, %d "
            "children).\n",
            in_gib(l.least), l.children + 1);
    }
    print_run("64 MiB below it", l.below);
    print_run("At it", l.above);
    std::printf(
        "\nRLIMIT_AS counts address space, not memory: the context reserves ranges for unified\n"
        "addressing up front, so under a limit near what the program itself maps, CUDA answers\n"
        "out of memory while the GPU is empty. Raise the limit (ulimit -v unlimited; limit a\n"
        "container's memory, not its address space).\n\n");
    claim_limits(ctx, taken, l);
    // The verdict: the limit was in force where nothing fits under it, as setrlimit(2) says
    // (mmap fails with ENOMEM past it), and with no limit every call succeeded (checked above).
    const bool in_force = l.at_start.limit_set == "yes" && l.at_start.plain_mmap == "ENOMEM";
    return ctx.verdict(
        in_force,
        format("with no limit every call succeeded; under a limit at the child's "
               "own size the limit was %s and a plain 256 MiB mmap %s",
               l.at_start.limit_set == "yes" ? "set" : "NOT set", l.at_start.plain_mmap.c_str()));
}

TUTORIAL_SECTION(address_limit, run_address_limit);
TUTORIAL_CHILD(limited, child_limited);
