// Checks of section alloc_cost: runs the walkthrough of ../alloc_cost.cpp round after round and
// times its steps on the host (the uploads by events), tables the costs and the break-even, shows
// what RLIMIT_MEMLOCK does (in a child), and judges registration's price.
#include "02_pinned/alloc_cost.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <string>

using tutorial::format;

namespace {

// A line of /proc/self/status with its runs of blanks squeezed ("VmLck: 0 kB"), or "?".
std::string status_line(const char* key) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind(key, 0) != 0) continue;
        std::string squeezed;
        for (char c : line) {
            const bool blank = c == ' ' || c == '\t';
            if (!blank || (!squeezed.empty() && squeezed.back() != ' '))
                squeezed += blank ? ' ' : c;
        }
        return squeezed;
    }
    return "?";
}

std::string limit_text(rlim_t limit) {
    return limit == RLIM_INFINITY ? "unlimited" : tutorial::format_bytes(limit);
}

// Medians over rounds of the walkthrough, ms: getting and giving back each way (host clock), and
// the two uploads (events).
struct Cost {
    double get_ms, give_ms;
};
struct Medians {
    Cost plain, malloc_host, write_combined, registration;
    double pageable_upload_ms, pinned_upload_ms;
};

Medians time_rounds(std::size_t bytes, int runs, bool& seen) {
    tutorial::StepTimes times;
    for (int r = 0; r < runs; ++r) {
        const Found f = walkthrough(bytes);
        seen = seen && f.pinned_seen && f.plain_seen;
    }
    const auto cost = [&](const tutorial::Step& get, const tutorial::Step& give) {
        return Cost{times.median_host_ms(get), times.median_host_ms(give)};
    };
    return {cost(plain_get, plain_give),
            cost(pinned_get, pinned_give),
            cost(wc_get, wc_give),
            cost(register_get, register_give),
            times.median_ms(upload_pageable),
            times.median_ms(upload_pinned)};
}

void print_costs(const Medians& m, double gib) {
    tutorial::Table table({{"how"},
                           {"get ms", tutorial::Align::right},
                           {"give back ms", tutorial::Align::right},
                           {"get ms per GiB", tutorial::Align::right}});
    const auto add = [&](const char* how, const Cost& cost) {
        table.add_row({how, format("%.1f", cost.get_ms), format("%.1f", cost.give_ms),
                       format("%.0f", cost.get_ms / gib)});
    };
    add("1. malloc + touch every page / free", m.plain);
    add("2. cudaMallocHost / cudaFreeHost", m.malloc_host);
    add("3. cudaHostAlloc(WriteCombined) / cudaFreeHost", m.write_combined);
    add("5. cudaHostRegister / cudaHostUnregister", m.registration);
    table.print();
}

// What pinning buys per transfer of the same buffer, and after how many transfers each way of
// pinning has paid for itself.
void print_break_even(std::size_t bytes, const Medians& m) {
    const double saved_ms = m.pageable_upload_ms - m.pinned_upload_ms;
    const double register_ms = m.registration.get_ms + m.registration.give_ms;
    // cudaMallocHost replaces the malloc a program would have made anyway: only the difference
    // is the price of pinning.
    const double malloc_host_extra_ms =
        (m.malloc_host.get_ms + m.malloc_host.give_ms) - (m.plain.get_ms + m.plain.give_ms);
    // At small sizes a pinned copy may save nothing (both are latency): then no number of
    // transfers repays the pinning, and a count would come out negative or infinite.
    const auto pays = [&](double cost_ms) {
        if (cost_ms <= 0.0) return std::string("pays from the first transfer");
        if (saved_ms <= 0.0) return std::string("never pays for itself at this size");
        return tutorial::format("pays for itself after %.0f transfer(s)",
                                std::ceil(cost_ms / saved_ms));
    };
    std::printf(
        "\nOne host -> device copy of %s: %.2f ms from pageable memory, %.2f ms once pinned,\n"
        "%.2f ms saved per transfer.\n",
        tutorial::format_bytes(bytes).c_str(), m.pageable_upload_ms, m.pinned_upload_ms, saved_ms);
    std::printf("Pinning with cudaHostRegister + cudaHostUnregister (%.1f ms) %s.\n", register_ms,
                pays(register_ms).c_str());
    if (malloc_host_extra_ms > 0.0) {
        std::printf(
            "cudaMallocHost + cudaFreeHost cost %.1f ms more than malloc + touch + free: the\n"
            "difference %s.\n",
            malloc_host_extra_ms, pays(malloc_host_extra_ms).c_str());
    } else {
        std::printf(
            "cudaMallocHost + cudaFreeHost cost %.1f ms less than malloc + touch + free here\n"
            "(likely because malloc'd memory takes one page fault per 4 KiB page when first\n"
            "touched, which the driver's own allocation avoids): it pays from the first "
            "transfer.\n",
            -malloc_host_extra_ms);
    }
}

// The memory-lock limit of this process, what the kernel counts as locked while pinned, and
// what pinning does in a child whose limit is lowered to 64 KiB.
void print_memlock(int device, std::size_t bytes) {
    rlimit memlock{};
    const bool have_limit = getrlimit(RLIMIT_MEMLOCK, &memlock) == 0;
    void* held = nullptr;
    const std::string locked_before = status_line("VmLck:");
    CUDA_CHECK(cudaMallocHost(&held, bytes));
    const std::string locked_during = status_line("VmLck:");
    CUDA_CHECK(cudaFreeHost(held));
    std::printf(
        "\nRLIMIT_MEMLOCK (ulimit -l) of this process: soft %s, hard %s.\n"
        "/proc/self/status before pinning %s: \"%s\"; while pinned: \"%s\"%s.\n",
        have_limit ? limit_text(memlock.rlim_cur).c_str() : "?",
        have_limit ? limit_text(memlock.rlim_max).c_str() : "?",
        tutorial::format_bytes(bytes).c_str(), locked_before.c_str(), locked_during.c_str(),
        locked_before == locked_during ? ": the pinned memory is not counted as locked" : "");
    std::printf("A child lowers its limit to 64 KiB (setrlimit), then pins %s both ways:\n",
                tutorial::format_bytes(bytes).c_str());
    const tutorial::ChildResult child =
        tutorial::run_child("pin_under_memlock", {std::to_string(device), std::to_string(bytes)});
    tutorial::print_child_output(child);
    std::printf(
        "The child %s. Whatever the limit does, pinned memory is gone from the OS: pinned pages\n"
        "cannot be swapped out, moved or reclaimed, so every GiB pinned is a GiB that other\n"
        "processes and the page cache can no longer use. Pin the buffers that take part in\n"
        "transfers, reuse them, and free them when the transfers are over.\n",
        child.describe().c_str());
}

}  // namespace

// Child role: lowers RLIMIT_MEMLOCK to 64 KiB, then pins `bytes` (args: device, bytes) with
// cudaMallocHost and with cudaHostRegister, and prints what each returned. Either may be
// refused: that is what it reports, in a child so that a refusal is not this process's error.
// It first gives up CAP_IPC_LOCK if it has it (root does): with it, the kernel ignores the limit.
int child_pin_under_memlock(const std::vector<std::string>& args) {
    const std::size_t bytes = std::strtoull(args.at(1).c_str(), nullptr, 10);
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct caps[2] = {};
    const bool had_ipc_lock =
        syscall(SYS_capget, &header, caps) == 0 && (caps[0].effective & (1u << CAP_IPC_LOCK)) != 0;
    if (had_ipc_lock) {
        caps[0].effective &= ~(1u << CAP_IPC_LOCK);
        caps[0].permitted &= ~(1u << CAP_IPC_LOCK);
        const bool dropped = syscall(SYS_capset, &header, caps) == 0;
        std::printf("this process had CAP_IPC_LOCK, which lifts the limit: %s\n",
                    dropped ? "dropped it" : "could not drop it");
    }
    const rlimit low{64 << 10, 64 << 10};
    if (setrlimit(RLIMIT_MEMLOCK, &low) != 0) {
        std::printf("setrlimit(RLIMIT_MEMLOCK, 64 KiB) failed: %s\n", std::strerror(errno));
        return 3;
    }
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    void* pinned = nullptr;
    const cudaError_t allocated = cudaMallocHost(&pinned, bytes);
    std::printf("with RLIMIT_MEMLOCK = 64 KiB: cudaMallocHost returned %s\n",
                cudaGetErrorName(allocated));
    if (allocated == cudaSuccess) CUDA_CHECK(cudaFreeHost(pinned));
    void* plain = std::malloc(bytes);
    if (plain == nullptr) {
        std::printf("malloc of %zu bytes failed\n", bytes);
        return 3;
    }
    std::memset(plain, 1, bytes);
    const cudaError_t registered = cudaHostRegister(plain, bytes, cudaHostRegisterDefault);
    std::printf("with RLIMIT_MEMLOCK = 64 KiB: cudaHostRegister returned %s\n",
                cudaGetErrorName(registered));
    if (registered == cudaSuccess) CUDA_CHECK(cudaHostUnregister(plain));
    std::free(plain);
    return 0;
}

tutorial::Result run_alloc_cost(tutorial::Context& ctx) {
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (64 << 20) : (1 << 30));
    const int runs = ctx.iters_or(ctx.quick() ? 3 : 5);
    std::printf(
        "The walkthrough, %d times after a warm-up, with %s: each way of getting host memory\n"
        "and giving it back, timed on the host's clock; medians of the rounds.\n\n",
        runs, tutorial::format_bytes(bytes).c_str());
    const Found warm_up = walkthrough(bytes);
    bool seen = warm_up.pinned_seen && warm_up.plain_seen;
    const Medians m = time_rounds(bytes, runs, seen);
    print_costs(m, static_cast<double>(bytes) / (1 << 30));
    print_break_even(bytes, m);
    print_memlock(ctx.device, bytes);

    std::printf("\n");
    ctx.claim(tutorial::documented(
        "pinned_is_host",
        "CUDA knows every pinned allocation as host memory, and malloc memory (before and after "
        "its registration) as memory it does not know",
        seen, seen ? "in every round" : "NOT in every round",
        "a system where malloc'd memory is registered with CUDA (HMM or ATS), or a registration "
        "that outlived cudaHostUnregister",
        tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes",
                        "cudaMemoryTypeUnregistered cudaMemoryTypeHost", "can"}));
    // 1.5x, not more: where the pages come from memory the machine has used before (a host busy
    // with other programs, a virtual machine whose memory has grown already) cudaMallocHost gets
    // them cheaper. 7 to 11x alone on one H100; 1.53x once on two H100s under ctest -j 8. Where
    // registration has to fault the pages in as cudaMallocHost does, the ratio is about 1.
    ctx.claim(tutorial::at_least(
                  "register_cheaper",
                  "cudaHostRegister on already-touched memory is cheaper than a new cudaMallocHost "
                  "of the same size",
                  m.malloc_host.get_ms / m.registration.get_ms, 1.5, "x",
                  "cudaMallocHost got its pages cheaply (for example from huge pages the kernel "
                  "had ready), or registration had to fault pages in")
                  .again([&] {
                      const Medians n = time_rounds(bytes, runs, seen);
                      return n.malloc_host.get_ms / n.registration.get_ms;
                  }),
              tutorial::why_too_small(bytes, 4 << 20,
                                      "cudaMallocHost may hand out pages the driver pinned "
                                      "before, and both calls are mostly their fixed costs"));
    return ctx.verdict(seen,
                       "cudaPointerGetAttributes saw every pinned allocation as host memory, "
                       "and malloc memory as unregistered before and after registration");
}

TUTORIAL_SECTION(alloc_cost, run_alloc_cost);
TUTORIAL_CHILD(pin_under_memlock, child_pin_under_memlock);
