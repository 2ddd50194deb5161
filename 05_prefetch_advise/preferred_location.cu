// Section `preferred_location`: cudaMemAdviseSetPreferredLocation says where pages should live.
// It moves nothing by itself: it changes what happens on the next fault, and a prefetch still
// overrides it.
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/report.hpp"
#include "common/timing.hpp"
#include "managed.hpp"
#include "sections.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

using tutorial::format;

namespace {

std::string where(int location) {
    if (location == cudaCpuDeviceId) return "host";
    if (location == cudaInvalidDeviceId) return "-";
    return "GPU " + std::to_string(location);
}

}  // namespace

tutorial::Result run_preferred_location(tutorial::Context& ctx) {
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (32 << 20) : (256 << 20));
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const cudaMemLocation gpu = gpu_location(ctx.device);
    const cudaMemLocation host = host_location();
    std::printf(
        "Each row: a fresh %s managed buffer, the advice, then the same full read twice in a\n"
        "row by the processor named. If the first read migrates the pages, the second runs at\n"
        "local speed; if it maps them where they are, both run at the speed of the link.\n\n",
        tutorial::format_bytes(bytes).c_str());

    tutorial::Table table({{"case"},
                           {"1st read GB/s", tutorial::Align::right},
                           {"2nd read GB/s", tutorial::Align::right},
                           {"PreferredLocation"},
                           {"LastPrefetchLocation"}});
    int wrong = 0;
    const std::uint32_t seed = 11;
    const std::uint64_t expected = pattern_sum(count, seed);
    struct Case {
        const char* name;
        bool prefer;                // set a preferred location at all
        cudaMemLocation preferred;  // where
        bool gpu_writes_first;      // else the CPU writes the data first
        bool prefetch_to_gpu;       // a prefetch after the advice
        bool gpu_reads;             // else the CPU reads
    };
    const Case cases[] = {
        {"no advice, CPU writes, GPU reads", false, host, false, false, true},
        {"preferred host, CPU writes, GPU reads", true, host, false, false, true},
        {"preferred host, prefetch to GPU, GPU reads", true, host, false, true, true},
        {"no advice, GPU writes, CPU reads", false, gpu, true, false, false},
        {"preferred GPU, GPU writes, CPU reads", true, gpu, true, false, false},
    };
    double preferred_host[2] = {};
    double no_advice_second = 0.0;
    for (const Case& c : cases) {
        std::uint32_t* data = nullptr;
        CUDA_CHECK(cudaMallocManaged(&data, bytes));
        if (c.prefer) advise(data, bytes, cudaMemAdviseSetPreferredLocation, c.preferred);
        if (c.gpu_writes_first) {
            fill_on_device(data, count, seed);
        } else {
            fill_on_host(data, count, seed);
        }
        if (c.prefetch_to_gpu) {
            prefetch(data, bytes, gpu, nullptr);
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        double gbps[2] = {};
        for (double& rate : gbps) {
            if (c.gpu_reads) {
                const DeviceSum s = timed_device_sum(data, count);
                wrong += s.sum != expected;
                rate = tutorial::gb_per_s(bytes, s.ms);
            } else {
                tutorial::HostTimer timer;
                wrong += sum_on_host(data, count) != expected;
                rate = tutorial::gb_per_s(bytes, timer.elapsed_ms());
            }
        }
        if (c.prefer && !c.prefetch_to_gpu && c.gpu_reads) {
            preferred_host[0] = gbps[0];
            preferred_host[1] = gbps[1];
        }
        if (!c.prefer && c.gpu_reads) no_advice_second = gbps[1];
        table.add_row(
            {c.name, format("%.1f", gbps[0]), format("%.1f", gbps[1]),
             where(range_attribute(data, bytes, cudaMemRangeAttributePreferredLocation)),
             where(range_attribute(data, bytes, cudaMemRangeAttributeLastPrefetchLocation))});
        CUDA_CHECK(cudaFree(data));
    }
    table.print();
    std::printf(
        "\nWith the host preferred, the GPU's first read (%.1f GB/s) pays for faults that map the\n"
        "pages where they are, and its second read runs at %.1f GB/s, the speed of PCIe: the\n"
        "pages stayed in host memory. Without advice they migrated, and the second read ran at\n"
        "%.1f GB/s from GPU memory. A prefetch still moved them. With the GPU preferred and\n"
        "directManagedMemAccessFromHost = %d, the CPU cannot map GPU memory, so its reads\n"
        "migrate the pages anyway: a preferred location is a policy for faults, not a pin.\n",
        preferred_host[0], preferred_host[1], no_advice_second,
        tutorial::device_attribute(ctx.device, cudaDevAttrDirectManagedMemAccessFromHost));
    return ctx.verdict(wrong == 0,
                       "every read, GPU or CPU, first or second, returned the sum of "
                       "the data written");
}
