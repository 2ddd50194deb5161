// Checks of section properties: each property of ../properties.cpp predicts a behaviour, and the
// section tries it (the prefetch, advice on malloc memory in a child, a CPU read of GPU-resident
// pages, timed).
#include "05_prefetch_advise/properties.cpp"

#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/predictions.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

using tutorial::Prediction;

namespace {

// concurrentManagedAccess: the cudaMemPrefetchAsync entry accepts a GPU as the destination (and
// a stream of a device) only where this attribute is non-zero. So with 1 the prefetch is a
// valid call and must succeed; with 0 the entry forbids it but names no error for it.
Prediction prefetch_accepted(int value, int device) {
    const cudaError_t status = try_prefetch_to_gpu(device);
    const std::string seen =
        std::string("cudaMemPrefetchAsync returned ") + cudaGetErrorName(status);
    if (value != 0) {
        return {"concurrentManagedAccess",
                value,
                "cudaMemPrefetchAsync to the GPU is accepted",
                status == cudaSuccess,
                seen,
                tutorial::Evidence::documented,
                "Runtime API reference: cudaMemPrefetchAsync"};
    }
    return {"concurrentManagedAccess",
            value,
            "a prefetch to the GPU is refused",
            status != cudaSuccess,
            seen,
            tutorial::Evidence::observed,
            "the cudaMemPrefetchAsync entry requires the attribute of the destination GPU but "
            "names no error for a GPU without it"};
}

// pageableMemoryAccess: the cudaMemAdvise entry takes system-allocated (malloc) memory only where
// each advice's own conditions hold, and for a preferred location on a GPU that GPU must have
// pageableMemoryAccess = 1; a range that breaks them is refused with an error (the entry names
// no particular code). So the child advises a GPU as the preferred location of malloc memory.
// Tried in a child process (below), so that a refused call is not counted against this one by
// compute-sanitizer.
Prediction advice_on_malloc(int value, int device) {
    const tutorial::ChildResult child =
        tutorial::run_child("advise_malloc", {std::to_string(device)});
    const std::size_t at = child.output.find("cudaMemAdvise");
    const std::string seen = at == std::string::npos
                                 ? "the child " + child.describe()
                                 : child.output.substr(at, child.output.find('\n', at) - at);
    const bool accepted = child.succeeded();
    const bool refused = child.exited && child.exit_code == 10;
    return {"pageableMemoryAccess",
            value,
            value ? "cudaMemAdvise accepts malloc memory" : "cudaMemAdvise refuses malloc memory",
            value ? accepted : refused,
            seen,
            tutorial::Evidence::documented,
            "Runtime API reference: cudaMemAdvise"};
}

// directManagedMemAccessFromHost = 0: a CPU read of GPU-resident pages migrates them to the host
// (the Programming Guide, N.1.7 Hardware Coherency), so the next kernel read faults them back and
// is much slower than a read of resident pages. How much slower is a measurement.
Prediction cpu_read_migrates(int value, int device, std::size_t bytes) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    fill_on_host(data, count, 6);
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu_location(device), 0, nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());
    timed_device_sum(data, count);  // warm-up
    const double resident_ms = timed_device_sum(data, count).ms;
    const bool cpu_ok = sum_on_host(data, count) == pattern_sum(count, 6);  // the CPU reads
    const double after_ms = timed_device_sum(data, count).ms;
    CUDA_CHECK(cudaFree(data));
    const bool migrated = after_ms > 3.0 * resident_ms;
    const std::string seen =
        tutorial::format("the next kernel read took %.1fx a resident one", after_ms / resident_ms);
    return {"directManagedMemAccessFromHost",
            value,
            value ? "a CPU read leaves GPU-resident pages where they are"
                  : "a CPU read takes GPU-resident pages to the host",
            cpu_ok && migrated == (value == 0),
            seen,
            tutorial::Evidence::timing};
}

}  // namespace

// Child role: a GPU advised as the preferred location of plain malloc memory. Exit 0 if
// accepted, 10 if refused.
int child_advise_malloc(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const cudaError_t status = try_advise_malloc(device);
    std::printf("cudaMemAdvise(malloc memory) returned %s\n", cudaGetErrorName(status));
    return status == cudaSuccess ? 0 : 10;
}

tutorial::Result run_properties(tutorial::Context& ctx) {
    const AdviceProperties p = advice_properties(ctx.device);
    const int concurrent = p.concurrent_managed_access;
    std::vector<Prediction> predictions = {
        prefetch_accepted(concurrent, ctx.device),
        advice_on_malloc(p.pageable_memory_access, ctx.device),
    };
    if (concurrent) {  // without on-demand migration there is nothing to migrate
        predictions.push_back(
            cpu_read_migrates(p.direct_managed_mem_access_from_host, ctx.device,
                              ctx.quick() ? (std::size_t{16} << 20) : (std::size_t{64} << 20)));
    }
    return tutorial::check_predictions(
        ctx, predictions,
        tutorial::format("hostNativeAtomicSupported = %d (not tried here): 1 would keep GPU "
                         "atomics on host-mapped pages native.",
                         p.host_native_atomic_supported));
}

TUTORIAL_SECTION(properties, run_properties);
TUTORIAL_CHILD(advise_malloc, child_advise_malloc);
