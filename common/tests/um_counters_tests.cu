// Unit tests of common/um_counters: the Unified Memory counters read through CUPTI. A program of
// its own (um_counters_tests), so that its CUPTI session is the only one in the process.
//
//   unavailable  (host) the recorder without counters: says why, runs the step, counts nothing
//   format       (host) the table cells and the one-line description of a known traffic
//   traffic      (GPU)  what the driver reports having moved for managed memory, step by step:
//                CPU writes, a kernel touches it, the CPU reads it back, a prefetch to the GPU,
//                a kernel after the prefetch, a prefetch back to the CPU
#include "common/check.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/um_counters.hpp"
#include "common/text.hpp"

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using tutorial::Context;
using tutorial::Result;
using tutorial::UmCounters;
using tutorial::UmTraffic;

namespace {

__global__ void add_one(int* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        data[i] += 1;
    }
}

void launch_add_one(int* data, std::size_t count) {
    add_one<<<264, 256>>>(data, count);
    CUDA_CHECK_LAUNCH();
}

Result test_unavailable(Context& ctx) {
    UmCounters counters;
    std::printf("counters %s: %s\n", counters.available() ? "available" : "not available",
                counters.available() ? counters.setup().c_str() : counters.why_not().c_str());
    int runs = 0;
    const UmTraffic traffic = counters.measure([&] { ++runs; });
    tutorial::Table table(tutorial::um_columns("step"));
    table.add_row(tutorial::um_cells("nothing", traffic));
    table.print();
    std::printf("the step ran %d time(s); traffic counted: %s; described as: %s\n", runs,
                traffic.counted ? "yes" : "no", tutorial::describe(traffic).c_str());
    const bool ok = !counters.available() && !counters.why_not().empty() && runs == 1 &&
                    !traffic.counted && tutorial::describe(traffic) == "not counted";
    return ctx.verdict(ok, "not available, with a reason; the step ran once and nothing counted");
}

Result test_format(Context& ctx) {
    UmTraffic t;
    t.counted = true;
    t.htod.total = std::uint64_t{64} << 20;
    t.dtoh.total = std::uint64_t{3} << 19;  // 1.5 MiB
    t.gpu_page_faults = 431;
    t.cpu_page_faults = 12;
    t.throttling = 2;
    const std::vector<std::string> cells = tutorial::um_cells("kernel", t);
    const std::vector<std::string> expected = {"kernel", "64.0", "1.5",  "0.0",
                                               "431",    "12",   "0/2/0"};
    const std::string line = tutorial::describe(t);
    const std::string expected_line =
        "64.0 MiB host to device, 1.5 MiB device to host, 431 GPU page faults, 12 CPU page "
        "faults, 2 throttling";
    std::printf("cells:    %s\nexpected: %s\n", tutorial::csv_line(cells).c_str(),
                tutorial::csv_line(expected).c_str());
    std::printf("line:     %s\nexpected: %s\n", line.c_str(), expected_line.c_str());
    const bool columns = tutorial::um_columns("step").size() == cells.size();
    // What a 256 MiB first touch by a kernel reported on driver 580.159.04 (H100): bytes moved to
    // serve faults, but no fault record. The first traffic above is consistent.
    UmTraffic lost;
    lost.counted = true;
    lost.htod.total = std::uint64_t{1841} << 17;    // 230.1 MiB
    lost.htod.on_fault = std::uint64_t{915} << 16;  // 57.2 MiB
    const std::string lost_reason = tutorial::um_records_lost(lost);
    std::printf(
        "records lost (consistent traffic): '%s'\nrecords lost (256 MiB first touch): "
        "'%s'\n",
        tutorial::um_records_lost(t).c_str(), lost_reason.c_str());
    const bool loss_seen =
        tutorial::um_records_lost(t).empty() &&
        lost_reason.rfind("57.2 MiB moved to the GPU to serve page faults", 0) == 0;
    return ctx.verdict(cells == expected && line == expected_line && columns && loss_seen,
                       "um_cells, describe and um_records_lost for known traffic");
}

// The steps of `traffic`, each measured on its own.
struct Steps {
    UmTraffic cpu_writes, kernel_first, cpu_reads, prefetch_gpu, kernel_after, prefetch_cpu, idle;
    std::size_t wrong = 0;  // ints the CPU read back that were not 1, then 2
    // Stray records seen by the start of each step: a rise means the step before it had records
    // that came after its own flush (each step waits 50 ms first, to give them time).
    std::vector<unsigned long long> strays;
};

Steps run_steps(UmCounters& counters, int device, std::size_t bytes) {
    const std::size_t count = bytes / sizeof(int);
    int* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    Steps s;
    const auto measure = [&](const std::function<void()>& step) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const UmTraffic t = counters.measure(step);
        s.strays.push_back(counters.stray_records());
        return t;
    };
    s.cpu_writes = measure([&] {
        for (std::size_t i = 0; i < count; ++i) data[i] = 0;
    });
    s.kernel_first = measure([&] { launch_add_one(data, count); });
    s.cpu_reads = measure([&] {
        for (std::size_t i = 0; i < count; ++i) s.wrong += data[i] != 1;
    });
    const cudaMemLocation gpu = {cudaMemLocationTypeDevice, device};
    const cudaMemLocation cpu = {cudaMemLocationTypeHost, 0};
    s.prefetch_gpu = measure([&] { CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, 0)); });
    s.kernel_after = measure([&] { launch_add_one(data, count); });
    s.prefetch_cpu = measure([&] { CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, cpu, 0, 0)); });
    for (std::size_t i = 0; i < count; ++i) s.wrong += data[i] != 2;
    // Late records: wait, then measure nothing; anything still arriving shows up here or as strays.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    s.idle = measure([] {});
    CUDA_CHECK(cudaFree(data));
    return s;
}

void print_causes(const char* step, const UmTraffic& t) {
    const auto causes = [](const tutorial::UmBytes& b) {
        return tutorial::format(
            "%s MiB (requested %s, on fault %s, speculative %s, evicted %s, "
            "access counters %s)",
            tutorial::mib(b.total).c_str(), tutorial::mib(b.requested).c_str(),
            tutorial::mib(b.on_fault).c_str(), tutorial::mib(b.speculative).c_str(),
            tutorial::mib(b.evicted).c_str(), tutorial::mib(b.access_counters).c_str());
    };
    std::printf("%-22s HtoD %s\n%-22s DtoH %s\n%-22s GPU fault records %llu, dropped %llu\n", step,
                causes(t.htod).c_str(), "", causes(t.dtoh).c_str(), "",
                static_cast<unsigned long long>(t.gpu_fault_records),
                static_cast<unsigned long long>(t.dropped_records));
}

bool near(std::uint64_t bytes, std::size_t expected) {
    return bytes >= expected * 0.95 && bytes <= expected * 1.05;
}

Result test_traffic(Context& ctx) {
    const std::size_t bytes = ctx.size_or(std::size_t{64} << 20);
    UmCounters counters;
    if (!counters.available()) return ctx.skip(counters.why_not());
    std::printf("%s\n", counters.setup().c_str());
    const Steps s = run_steps(counters, ctx.device, bytes);
    const std::vector<std::pair<const char*, const UmTraffic*>> rows = {
        {"CPU writes", &s.cpu_writes},
        {"kernel, first touch", &s.kernel_first},
        {"CPU reads back", &s.cpu_reads},
        {"prefetch to GPU", &s.prefetch_gpu},
        {"kernel after prefetch", &s.kernel_after},
        {"prefetch to CPU", &s.prefetch_cpu},
        {"nothing, 200 ms later", &s.idle}};
    tutorial::Table table(tutorial::um_columns("step"));
    for (const auto& row : rows) table.add_row(tutorial::um_cells(row.first, *row.second));
    table.print();
    for (const auto& row : rows) {
        print_causes(row.first, *row.second);
        const std::string lost = tutorial::um_records_lost(*row.second);
        if (!lost.empty()) std::printf("%-22s %s\n", "", lost.c_str());
    }
    std::string strays;
    for (unsigned long long n : s.strays) strays += " " + std::to_string(n);
    std::printf("stray records after each step:%s; wrong values read back: %zu\n", strays.c_str(),
                s.wrong);

    const UmTraffic& after = s.kernel_after;
    const bool ok = near(s.kernel_first.htod.total, bytes) && s.kernel_first.gpu_page_faults > 0 &&
                    near(s.cpu_reads.dtoh.total, bytes) && near(s.prefetch_gpu.htod.total, bytes) &&
                    s.prefetch_gpu.gpu_page_faults == 0 &&
                    after.htod.total + after.dtoh.total < bytes / 100 &&
                    after.gpu_page_faults == 0 && s.wrong == 0;
    return ctx.verdict(
        ok,
        tutorial::format(
            "a first touch by a kernel pulled %s MiB with %llu GPU faults, the CPU's read pushed "
            "%s "
            "MiB back, a prefetch moved %s MiB with no fault, and a kernel after it moved %s MiB",
            tutorial::mib(s.kernel_first.htod.total).c_str(),
            static_cast<unsigned long long>(s.kernel_first.gpu_page_faults),
            tutorial::mib(s.cpu_reads.dtoh.total).c_str(),
            tutorial::mib(s.prefetch_gpu.htod.total).c_str(),
            tutorial::mib(after.htod.total + after.dtoh.total).c_str()));
}

// A child whose first CUDA work is making the counters: nothing has made a context yet, so this
// shows whether CUPTI accepts the configuration that early. Prints the setup line, then what a
// kernel's first touch of 8 MiB moved.
int child_first_thing(const std::vector<std::string>&) {
    UmCounters counters;
    std::printf("first thing: %s\n",
                counters.available() ? counters.setup().c_str() : counters.why_not().c_str());
    if (!counters.available()) return 1;
    const std::size_t bytes = std::size_t{8} << 20;
    int* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    for (std::size_t i = 0; i < bytes / sizeof(int); ++i) data[i] = 0;
    const UmTraffic t = counters.measure([&] { launch_add_one(data, bytes / sizeof(int)); });
    std::printf("first thing, a kernel touching 8 MiB: %s\n", tutorial::describe(t).c_str());
    CUDA_CHECK(cudaFree(data));
    return near(t.htod.total, bytes) ? 0 : 1;
}

Result test_first_thing(Context& ctx) {
    const tutorial::ChildResult child = tutorial::run_child("first_thing", {});
    tutorial::print_child_output(child);
    return ctx.verdict(child.succeeded(),
                       "counters made before any context: available, and a kernel's first touch "
                       "of 8 MiB counted as 8 MiB host to device (child " +
                           child.describe() + ")");
}

}  // namespace

int main(int argc, char** argv) {
    using tutorial::MiB;
    using tutorial::Section;
    using tutorial::Takes;
    const tutorial::Chapter chapter{
        "um_counters_tests",
        "Unit tests of the Unified Memory counters (common/um_counters)",
        {
            Section{"unavailable",
                    "without counters: the reason, the step still runs",
                    {},
                    false,
                    test_unavailable},
            Section{
                "format", "table cells and description of a known traffic", {}, false, test_format},
            Section{"traffic", "what moved for managed memory, step by step (--size)",
                    Takes{}.size(4 * MiB, std::size_t{1} << 30), true, test_traffic},
            Section{"first_thing",
                    "counters made before any CUDA context, in a child",
                    {},
                    true,
                    test_first_thing},
        },
        {{"first_thing", child_first_thing}}};
    return tutorial::run_chapter(chapter, argc, argv);
}
