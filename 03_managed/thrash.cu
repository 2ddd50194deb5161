// Section `thrash`: the CPU and the GPU take turns writing managed memory. On the same page, the
// page migrates back and forth every round; on separate pages it stays where it is used.
#include "common/check.hpp"
#include "common/report.hpp"
#include "common/timing.hpp"
#include "sections.hpp"

#include <cstdio>

namespace {

__global__ void gpu_write(int* where, int value) {
    *where = value;
}

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
    std::printf(
        "%d rounds of: the CPU writes element 0 of a managed buffer, then a kernel writes one\n"
        "element and the host waits for it (cudaDeviceSynchronize). Host timer, 10 warm-up\n"
        "rounds first.\n\n",
        rounds);
    const Case cases[] = {
        {"GPU only (no CPU write): launch + sync", false, far_apart},
        {"CPU and GPU on separate pages", true, far_apart},
        {"CPU and GPU on the same page", true, 1},
    };
    tutorial::Table table({{"case"},
                           {"us per round", tutorial::Align::right},
                           {"vs GPU only", tutorial::Align::right},
                           {"final values"}});
    double baseline_us = 0.0;
    double separate_us = 0.0;
    double same_us = 0.0;
    int correct = 0;
    for (const Case& c : cases) {
        int* data = nullptr;
        CUDA_CHECK(cudaMallocManaged(&data, (far_apart + 1) * sizeof(int)));
        data[0] = -1;
        const auto round = [&](int r) {
            if (c.cpu_writes) data[0] = r;
            gpu_write<<<1, 1>>>(data + c.gpu_index, 2 * r + 1);
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaDeviceSynchronize());
        };
        for (int r = 0; r < 10; ++r) round(r);
        tutorial::HostTimer timer;
        for (int r = 0; r < rounds; ++r) round(r);
        const double us = timer.elapsed_ms() * 1e3 / rounds;
        const int last = rounds - 1;
        const bool ok = data[c.gpu_index] == 2 * last + 1 && data[0] == (c.cpu_writes ? last : -1);
        correct += ok;
        CUDA_CHECK(cudaFree(data));
        if (!c.cpu_writes) baseline_us = us;
        if (c.cpu_writes && c.gpu_index == far_apart) separate_us = us;
        if (c.gpu_index == 1) same_us = us;
        table.add_row({c.name, tutorial::format("%.1f", us),
                       tutorial::format("%.1fx", us / baseline_us), ok ? "correct" : "WRONG"});
    }
    table.print();
    std::printf(
        "\nOn the same page every round costs two migrations: the CPU's write faults the page\n"
        "back from the GPU, the kernel's write faults it over again: %.1f us more per round\n"
        "than on separate pages. Memory that both sides write in turns is the worst case for\n"
        "managed memory; chapter 05 shows how prefetching and memory advice avoid the faults.\n",
        same_us - separate_us);
    return ctx.verdict(correct == 3, tutorial::format("%d of 3 cases left the values the last "
                                                      "round wrote",
                                                      correct));
}
