// Section `thrash`: the CPU and the GPU take turns writing managed memory. On the same page, the
// page migrates back and forth every round; on separate pages it stays where it is used.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/report.hpp"
#include "common/timing.hpp"
#include "sections.hpp"

#include <cstdio>

namespace {

// lesson:begin
__global__ void gpu_write(int* where, int value) {
    *where = value;
}

// One round: the CPU writes element 0 of managed `data`, then a kernel writes element
// `gpu_index` and the host waits for it. Where both elements share a page, that page moves to the
// CPU and back to the GPU every round.
void one_round(int* data, std::size_t gpu_index, bool cpu_writes, int r) {
    if (cpu_writes) data[0] = r;
    gpu_write<<<1, 1>>>(data + gpu_index, 2 * r + 1);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

// Far enough apart that the two addresses never share a page, whatever page size the driver
// uses for managed memory (4 KiB on the CPU, up to 2 MiB on the GPU).
constexpr std::size_t far_apart = (4 << 20) / sizeof(int);

struct Case {
    const char* name;
    bool cpu_writes;
    std::size_t gpu_index;  // where the GPU writes, relative to the CPU's element 0
};

}  // namespace

tutorial::Result run_thrash(tutorial::Context& ctx) {
    const int rounds = ctx.iters_or(ctx.quick() ? 100 : 2000);
    constexpr int first = 20;  // the rounds reported on their own
    std::printf(
        "%d rounds of: the CPU writes element 0 of a fresh managed buffer, then a kernel writes\n"
        "one element and the host waits for it (cudaDeviceSynchronize). Host timer; the first\n"
        "%d rounds are reported apart from the rest.\n\n",
        rounds, first);
    const Case cases[] = {
        {"GPU only (no CPU write): launch + sync", false, far_apart},
        {"CPU and GPU on separate pages", true, far_apart},
        {"CPU and GPU on the same page", true, 1},
    };
    tutorial::Table table({{"case"},
                           {"us per round, first 20", tutorial::Align::right},
                           {"us per round, the rest", tutorial::Align::right},
                           {"final values"}});
    double separate_first = 0.0;
    double same_first = 0.0;
    double same_rest = 0.0;
    int correct = 0;
    for (const Case& c : cases) {
        int* data = nullptr;
        CUDA_CHECK(cudaMallocManaged(&data, (far_apart + 1) * sizeof(int)));
        data[0] = -1;
        const auto round = [&](int r) { one_round(data, c.gpu_index, c.cpu_writes, r); };
        tutorial::HostTimer timer;
        for (int r = 0; r < first; ++r) round(r);
        const double first_us = timer.elapsed_ms() * 1e3 / first;
        timer.restart();
        for (int r = first; r < rounds; ++r) round(r);
        const double rest_us = timer.elapsed_ms() * 1e3 / (rounds - first);
        const int last = rounds - 1;
        const bool ok = data[c.gpu_index] == 2 * last + 1 && data[0] == (c.cpu_writes ? last : -1);
        correct += ok;
        CUDA_CHECK(cudaFree(data));
        if (c.cpu_writes && c.gpu_index == far_apart) separate_first = first_us;
        if (c.gpu_index == 1) {
            same_first = first_us;
            same_rest = rest_us;
        }
        table.add_row({c.name, tutorial::format("%.1f", first_us),
                       tutorial::format("%.1f", rest_us), ok ? "correct" : "WRONG"});
    }
    table.print();
    std::printf(
        "\nIn the first rounds a round on the same page costs %.1f us, %.1fx a round on separate\n"
        "pages (whose first rounds include the pages' first touch): the CPU's write faults the\n"
        "page back from the GPU, and the kernel's write faults it over again.\n",
        same_first, same_first / separate_first);
    if (same_rest < 0.7 * same_first) {
        std::printf(
            "Later rounds cost %.1f us. Most likely the driver noticed the ping-pong and stopped\n"
            "moving the page, leaving it in one place for the other side to reach remotely (the\n"
            "driver does not report this; the times are the evidence).\n",
            same_rest);
    }
    std::printf(
        "Memory both sides write in turns is the worst case for managed memory; chapter 05\n"
        "shows how prefetching and memory advice avoid the faults.\n\n");
    ctx.claim(tutorial::at_least(
        "in the first rounds, CPU and GPU writing the same page cost more per round than writing "
        "separate pages",
        same_first / separate_first, 1.5, "x",
        "the page did not migrate on each touch: a system where the CPU reaches GPU memory "
        "directly (directManagedMemAccessFromHost = 1) or where managed memory stays in host "
        "memory"),
        tutorial::why_pages_need_not_migrate(ctx.device));
    return ctx.verdict(correct == 3, tutorial::format("%d of 3 cases left the values the last "
                                                      "round wrote",
                                                      correct));
}
