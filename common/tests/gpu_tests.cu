#include "common/check.hpp"
#include "common/device.hpp"
#include "common/driver.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"
#include "tests.hpp"

using tutorial::Context;
using tutorial::Result;

namespace {

// Busy-waits until the GPU's nanosecond clock (%globaltimer) has advanced by `duration_ns`, so
// the kernel's run time is known in advance without depending on the SM clock rate.
__global__ void spin_for(unsigned long long duration_ns, unsigned long long* elapsed_ns) {
    unsigned long long start = 0;
    unsigned long long now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < duration_ns);
    *elapsed_ns = now - start;
}

}  // namespace

Result test_event_timer(Context& ctx) {
    constexpr double spin_ms = 20.0;
    unsigned long long* elapsed_ns = nullptr;
    CUDA_CHECK(cudaMalloc(&elapsed_ns, sizeof *elapsed_ns));
    spin_for<<<1, 1>>>(1000000, elapsed_ns);  // warm-up: loads the module
    CUDA_CHECK_LAUNCH_SYNC();

    tutorial::EventTimer events;
    tutorial::HostTimer host;
    events.start();
    spin_for<<<1, 1>>>(static_cast<unsigned long long>(spin_ms * 1e6), elapsed_ns);
    CUDA_CHECK_LAUNCH();
    events.stop();
    const double event_ms = events.elapsed_ms();  // synchronizes
    const double host_ms = host.elapsed_ms();
    unsigned long long kernel_ns = 0;
    CUDA_CHECK(cudaMemcpy(&kernel_ns, elapsed_ns, sizeof kernel_ns, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(elapsed_ns));

    tutorial::Table table({{"clock"}, {"ms", tutorial::Align::right}});
    table.add_row({"kernel's own %globaltimer", tutorial::format("%.3f", kernel_ns / 1e6)});
    table.add_row({"EventTimer", tutorial::format("%.3f", event_ms)});
    table.add_row({"HostTimer (launch to sync)", tutorial::format("%.3f", host_ms)});
    table.print();
    // The events bracket the kernel, and the host waited for both events.
    const bool ok = kernel_ns / 1e6 >= spin_ms && event_ms >= kernel_ns / 1e6 * 0.99 &&
                    event_ms <= host_ms * 1.01;
    return ctx.verdict(ok, "kernel's clock <= EventTimer <= HostTimer for a 20 ms kernel");
}

Result test_driver_calls(Context& ctx) {
    // The same fact through the runtime and through a driver function found by DRIVER_FUNCTION.
    const auto cuDeviceGet = DRIVER_FUNCTION(cuDeviceGet);
    const auto cuDeviceGetAttribute = DRIVER_FUNCTION(cuDeviceGetAttribute);
    CUdevice device = 0;
    CU_CHECK(cuDeviceGet(&device, ctx.device));
    int driver_value = 0;
    CU_CHECK(cuDeviceGetAttribute(&driver_value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
    const int runtime_value =
        tutorial::device_attribute(ctx.device, cudaDevAttrMultiProcessorCount);
    std::printf("multiprocessors: runtime %d, driver %d\n", runtime_value, driver_value);

    // With a driver present, CU_CHECK's line names the error.
    const std::string expected =
        "x.cu:3: cuMemAlloc(&p, n) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)";
    const std::string line =
        tutorial::error_line("x.cu", 3, "cuMemAlloc(&p, n)", CUDA_ERROR_OUT_OF_MEMORY);
    std::printf("error_line(...)  = %s\nexpected         = %s\n", line.c_str(), expected.c_str());

    const char* problem = nullptr;
    const bool missing = tutorial::find_driver_function("cuNoSuchFunction", &problem) == nullptr;
    std::printf("looking up cuNoSuchFunction: %s\n", missing ? problem : "found?!");
    return ctx.verdict(driver_value == runtime_value && line == expected && missing,
                       "driver and runtime agree on the SM count; CU_CHECK's line names the error");
}

Result test_device_memory(Context& ctx) {
    // cudaMalloc takes its memory at once, so free_device_memory must drop by at least the size,
    // and come back (give or take the allocator's rounding) after cudaFree.
    const std::size_t bytes = ctx.size_or(64 << 20);
    const std::size_t before = tutorial::free_device_memory();
    void* memory = nullptr;
    CUDA_CHECK(cudaMalloc(&memory, bytes));
    const std::size_t during = tutorial::free_device_memory();
    CUDA_CHECK(cudaFree(memory));
    const std::size_t after = tutorial::free_device_memory();
    std::printf("free device memory: %s before, %s with %s allocated, %s after\n",
                tutorial::format_bytes(before).c_str(), tutorial::format_bytes(during).c_str(),
                tutorial::format_bytes(bytes).c_str(), tutorial::format_bytes(after).c_str());
    const std::size_t slack = 2 << 20;
    return ctx.verdict(during + bytes <= before && after + slack >= before,
                       "free_device_memory dropped by at least the size of a cudaMalloc and "
                       "came back after cudaFree");
}
