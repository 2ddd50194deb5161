// Section `properties`: what this device can do with page-locked host memory. Each property
// predicts a behaviour, and the section tries each behaviour.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/patterns.hpp"
#include "common/harness/predictions.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"
#include "common/harness/chapter.hpp"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using tutorial::format;
using tutorial::Prediction;

namespace {

// What the device says about host memory.
struct HostMemoryProperties {
    int can_map_host_memory, host_register_supported, host_register_read_only_supported;
    int async_engine_count, integrated;
};

// lesson:begin
// cudaDeviceGetAttribute reads one property at a time, as an int, without a cudaDeviceProp.
HostMemoryProperties host_memory_properties(int device) {
    HostMemoryProperties p{};
    CUDA_CHECK(cudaDeviceGetAttribute(&p.can_map_host_memory, cudaDevAttrCanMapHostMemory, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.host_register_supported,
                                      cudaDevAttrHostRegisterSupported, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.host_register_read_only_supported,
                                      cudaDevAttrHostRegisterReadOnlySupported, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.async_engine_count, cudaDevAttrAsyncEngineCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p.integrated, cudaDevAttrIntegrated, device));
    return p;
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above: each property's
// prediction, then a test of it. ----

// The outcome of a call that is allowed to fail, in words.
std::string outcome(const char* call, cudaError_t status) {
    cudaGetLastError();  // a refused call leaves its error behind; this test expected it
    return std::string(call) + " returned " + cudaGetErrorName(status);
}

// What the section saw when it tried a property's behaviour: whether it was what the value
// predicts, and what happened, in words.
struct Tried {
    bool came_true;
    std::string seen;
};

// canMapHostMemory: 1 predicts that a kernel writes through the device pointer of mapped host
// memory. 0 predicts a refusal, and the cudaHostAlloc entry says where: cudaHostAlloc accepts the
// Mapped flag anyway and cudaHostGetDevicePointer is the call that fails.
Tried try_mapped_memory(int value) {
    const std::size_t count = 1 << 16;
    std::uint32_t* host = nullptr;
    const cudaError_t status = cudaHostAlloc(&host, count * sizeof *host, cudaHostAllocMapped);
    if (status != cudaSuccess) return {false, outcome("cudaHostAlloc(Mapped)", status)};
    std::uint32_t* device_view = nullptr;
    const cudaError_t mapped =
        cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_view), host, 0);
    Tried t{value == 0 && mapped != cudaSuccess, outcome("cudaHostGetDevicePointer", mapped)};
    if (mapped == cudaSuccess && value != 0) {
        fill_on_device(device_view, count, 42);  // a kernel writes through the mapping
        t.came_true = mismatches_on_host(host, count, 42) == 0;
        t.seen = t.came_true ? "a kernel's 65536 values arrived in host memory"
                             : "WRONG values arrived";
    }
    CUDA_CHECK(cudaFreeHost(host));
    return t;
}

// hostRegisterSupported and hostRegisterReadOnlySupported: 1 predicts that cudaHostRegister
// with these flags pins malloc memory, 0 that it refuses.
Tried try_registration(int value, unsigned int flags) {
    const std::size_t bytes = 1 << 20;
    void* memory = std::malloc(bytes);
    const cudaError_t status = cudaHostRegister(memory, bytes, flags);
    Tried t{(status == cudaSuccess) == (value != 0),
            outcome(flags == cudaHostRegisterReadOnly ? "cudaHostRegister(ReadOnly)"
                                                      : "cudaHostRegister",
                    status)};
    if (status == cudaSuccess) CUDA_CHECK(cudaHostUnregister(memory));
    std::free(memory);
    return t;
}

// An upload in one stream and a download in another: with two or more copy engines they run at
// the same time, so both together take much less than one after the other.
Tried try_copy_engines(int engines, std::size_t bytes) {
    void* host_up = nullptr;
    void* host_down = nullptr;
    void* device_up = nullptr;
    void* device_down = nullptr;
    CUDA_CHECK(cudaMallocHost(&host_up, bytes));
    CUDA_CHECK(cudaMallocHost(&host_down, bytes));
    std::memset(host_up, 0, bytes);
    CUDA_CHECK(cudaMalloc(&device_up, bytes));
    CUDA_CHECK(cudaMalloc(&device_down, bytes));
    CUDA_CHECK(cudaMemset(device_down, 0, bytes));  // what goes down is initialized data
    cudaStream_t up = nullptr;
    cudaStream_t down = nullptr;
    CUDA_CHECK(cudaStreamCreate(&up));
    CUDA_CHECK(cudaStreamCreate(&down));
    const auto upload = [&] {
        CUDA_CHECK(cudaMemcpyAsync(device_up, host_up, bytes, cudaMemcpyHostToDevice, up));
    };
    const auto download = [&] {
        CUDA_CHECK(cudaMemcpyAsync(host_down, device_down, bytes, cudaMemcpyDeviceToHost, down));
    };
    // The three timings take turns, round after round, so that a slow moment of the link (another
    // process's copies, a power state) lands on all three alike instead of on one of them.
    // Streams created with the default flag wait for the legacy default stream and it waits for
    // them, so the timer's events on it bracket both copies.
    tutorial::EventTimer timer;
    const auto timed = [&](const auto& enqueue) {
        timer.start();
        enqueue();
        timer.stop();
        return timer.elapsed_ms();
    };
    std::vector<double> up_ms, down_ms, both_ms;
    constexpr int warmup_rounds = 2;
    constexpr int rounds = 9;
    for (int round = 0; round < warmup_rounds + rounds; ++round) {
        const double u = timed(upload);
        const double d = timed(download);
        const double b = timed([&] {
            upload();
            download();
        });
        if (round < warmup_rounds) continue;
        up_ms.push_back(u);
        down_ms.push_back(d);
        both_ms.push_back(b);
    }
    for (cudaStream_t stream : {up, down}) CUDA_CHECK(cudaStreamDestroy(stream));
    for (void* p : {device_up, device_down}) CUDA_CHECK(cudaFree(p));
    for (void* p : {host_up, host_down}) CUDA_CHECK(cudaFreeHost(p));
    const double share =
        tutorial::median(both_ms) / (tutorial::median(up_ms) + tutorial::median(down_ms));
    const bool overlapped = share < 0.75;
    return {overlapped == (engines >= 2),
            format("both took %.0f%% of one after the other", 100.0 * share)};
}

}  // namespace

tutorial::Result run_properties(tutorial::Context& ctx) {
    const HostMemoryProperties p = host_memory_properties(ctx.device);
    const Tried mapped = try_mapped_memory(p.can_map_host_memory);
    const Tried registered = try_registration(p.host_register_supported, cudaHostRegisterDefault);
    const Tried read_only =
        try_registration(p.host_register_read_only_supported, cudaHostRegisterReadOnly);
    // Under compute-sanitizer the timing is not judged, so a small copy is enough there.
    const Tried engines = try_copy_engines(
        p.async_engine_count, !tutorial::why_timing_not_judged().empty() ? (std::size_t{1} << 20)
                                                                          : (std::size_t{64} << 20));
    const std::vector<Prediction> predictions = {
        {"canMapHostMemory", p.can_map_host_memory,
         p.can_map_host_memory ? "a kernel writes through a mapped host pointer"
                               : "cudaHostGetDevicePointer refuses mapped host memory",
         mapped.came_true, mapped.seen, tutorial::Evidence::documented,
         "Runtime API reference: cudaDeviceAttr (cudaDevAttrCanMapHostMemory); cudaHostAlloc"},
        {"hostRegisterSupported", p.host_register_supported,
         p.host_register_supported ? "malloc memory can be pinned this way"
                                   : "this registration is refused",
         registered.came_true, registered.seen, tutorial::Evidence::documented,
         "Runtime API reference: cudaHostRegister (supported where "
         "cudaDevAttrHostRegisterSupported is not 0)"},
        {"hostRegisterReadOnlySupported", p.host_register_read_only_supported,
         p.host_register_read_only_supported ? "malloc memory can be pinned this way"
                                             : "this registration is refused",
         read_only.came_true, read_only.seen, tutorial::Evidence::documented,
         "Runtime API reference: cudaHostRegister (cudaHostRegisterReadOnly needs "
         "cudaDevAttrHostRegisterReadOnlySupported, else cudaErrorNotSupported)"},
        // A measured prediction: the overlap is timed, and not judged under compute-sanitizer.
        {"asyncEngineCount", p.async_engine_count,
         p.async_engine_count >= 2 ? "an upload and a download overlap in time"
                                   : "an upload and a download take turns",
         engines.came_true, engines.seen, tutorial::Evidence::timing, ""},
    };
    return tutorial::check_predictions(
        ctx, predictions,
        p.integrated
            ? "integrated = 1: the GPU shares the CPU's DRAM, so no PCIe link lies in between."
            : "integrated = 0: host memory is on the other side of a PCIe (or NVLink) link.");
}

TUTORIAL_SECTION(properties, run_properties);
