// Checks of section compression: for memory from ../compression.cu, requested compressible and
// ordinary, kernels write and read zeros and a pattern; events, medians; sums checked.
#include "06_vmm/compression.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

using tutorial::Align;
using tutorial::EventTimer;
using tutorial::format;
using tutorial::format_bytes;
using tutorial::gb_per_s;
using tutorial::median_event_ms;
using tutorial::median_ms;
using tutorial::round_up;
using tutorial::Table;
using tutorial::vmm_free;
using tutorial::vmm_granularity;
using tutorial::vmm_unmap;

namespace {

__global__ void write_zeros(uint4* data, std::size_t vectors) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < vectors;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = make_uint4(0, 0, 0, 0);
    }
}

void free_region(const Region& region) {
    vmm_unmap(region.address, region.bytes);
    vmm_free(region.address, region.bytes);
}

struct Rates {
    double write_gbps;
    double read_gbps;
    bool sum_ok;
};

// A kernel writes the whole buffer (zeros, or the pattern), then a kernel reads and sums it.
Rates measure(std::uint32_t* data, std::size_t count, bool zeros, int runs) {
    const std::size_t bytes = count * sizeof *data;
    const double write_ms = median_event_ms(1, runs, [&] {
        if (zeros) {
            write_zeros<<<1024, 256>>>(reinterpret_cast<uint4*>(data), count / 4);
            CUDA_CHECK_LAUNCH();
        } else {
            fill_on_device_async(data, count, 13, nullptr);
        }
    });
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    EventTimer timer;
    const double read_ms = median_ms(1, runs, [&] {
        CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));  // before the timed part
        timer.start();
        sum_on_device_async(data, count, sum, nullptr);
        timer.stop();
        return timer.elapsed_ms();
    });
    unsigned long long result = 0;
    CUDA_CHECK(cudaMemcpy(&result, sum, sizeof result, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(sum));
    return {gb_per_s(bytes, write_ms), gb_per_s(bytes, read_ms),
            result == (zeros ? 0 : pattern_sum(count, 13))};
}

}  // namespace

tutorial::Result run_compression(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("VMM is not supported on this device");
    }
    if (tutorial::driver_attribute(ctx.device, CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED) !=
        1) {
        return ctx.skip("GENERIC_COMPRESSION_SUPPORTED is 0 on this device");
    }
    // Quick mode still reads 256 MiB: a 64 MiB read takes about 20 us, short enough for launch
    // jitter to move the pattern's ratio by 15% (1.16x once on an H100).
    // The granularity depends on the properties, compression included. Both are powers of two,
    // so a multiple of the larger one suits both allocations.
    const std::size_t granule = std::max(vmm_granularity(properties(ctx.device, true)),
                                         vmm_granularity(properties(ctx.device, false)));
    const std::size_t bytes = round_up(ctx.size_or(ctx.quick() ? (256 << 20) : (1 << 30)), granule);
    const int runs = ctx.iters_or(ctx.quick() ? 5 : 10);
    std::printf(
        "Two %s VMM allocations, one requested with CU_MEM_ALLOCATION_COMP_GENERIC. For each,\n"
        "and for all-zero and pattern (incompressible) contents: a kernel writes the whole\n"
        "buffer, a kernel reads and sums it. Events, 1 warm-up, median of %d.\n\n",
        format_bytes(bytes).c_str(), runs);

    Table table({{"memory"},
                 {"granted"},
                 {"contents"},
                 {"write GB/s", Align::right},
                 {"read GB/s", Align::right},
                 {"sum"}});
    int wrong = 0;
    Rates rates[2][2] = {};  // [compressible][zeros]
    for (const bool compressible : {true, false}) {
        const Region region = make_region(ctx.device, bytes, compressible);
        if (compressible && !region.compressed) {
            free_region(region);
            return ctx.skip(
                "the driver did not grant the compressible request (it may refuse "
                "it for a size, for a partitioned GPU, or when compression is off)");
        }
        auto* data = reinterpret_cast<std::uint32_t*>(region.address);
        for (const bool zeros : {true, false}) {
            const Rates r = measure(data, bytes / 4, zeros, runs);
            rates[compressible][zeros] = r;
            wrong += r.sum_ok ? 0 : 1;
            table.add_row({compressible ? "requested compressible" : "ordinary",
                           region.compressed ? "compressible" : "not compressible",
                           zeros ? "all zeros" : "pattern", format("%.0f", r.write_gbps),
                           format("%.0f", r.read_gbps), r.sum_ok ? "correct" : "WRONG"});
        }
        free_region(region);
    }
    table.print();
    // Read gains of compressible over ordinary memory, per contents. The pattern's gain is the
    // control: measured in the same run, it moves with anything that is not compression.
    const double zeros_gain = rates[1][1].read_gbps / rates[0][1].read_gbps;
    const double pattern_gain = rates[1][0].read_gbps / rates[0][0].read_gbps;
    const double peak = tutorial::peak_memory_gbps(ctx.device);
    std::printf(
        "\nThe driver granted the compressible request (cuMemGetAllocationPropertiesFromHandle).\n"
        "Compare rows with the same contents: compressible memory wrote all-zero data %.2fx and\n"
        "read it %.2fx as fast as ordinary memory; for the pattern, %.2fx and %.2fx. Ordinary\n"
        "memory reads both contents at about one rate, so the kernel's work does not depend on\n"
        "the values. Compressible zeros were read at %.0f GB/s, %.0f%% of the memory's %.0f GB/s\n"
        "peak: above 100%%, less data crossed the memory bus than the kernel asked for.\n"
        "Compression saves DRAM traffic when the data compresses and cannot help when it does "
        "not.\n\n",
        rates[1][1].write_gbps / rates[0][1].write_gbps, zeros_gain,
        rates[1][0].write_gbps / rates[0][0].write_gbps, pattern_gain, rates[1][1].read_gbps,
        100 * rates[1][1].read_gbps / peak, peak);
    ctx.claim(tutorial::at_least(
        "compressible memory reads all-zero data faster than ordinary memory, beyond the same "
        "gain for incompressible data (zeros' gain / the pattern's gain)",
        zeros_gain / pattern_gain, 1.3, "x",
        "the zeros were not stored compressed: compression may be granted on paper and off in "
        "this GPU's configuration"));
    ctx.claim(tutorial::at_most(
        "...and gives incompressible data no such gain (read GB/s of the pattern, compressible "
        "/ ordinary)",
        pattern_gain, 1.1, "x", "the two buffers were read under different conditions"));
    return ctx.verdict(wrong == 0, "every sum over every kind of memory and contents was right");
}

TUTORIAL_SECTION(compression, run_compression);
