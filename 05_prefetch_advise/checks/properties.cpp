// Checks of section properties: runs ../properties.cpp's walkthrough round after round, timing
// its two kernel reads, and sets each attribute's prediction against what the walkthrough saw;
// where pageableMemoryAccess = 0 the refused advice on malloc memory is tried in a child.
#include "05_prefetch_advise/properties.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/claim.hpp"
#include "common/harness/predictions.hpp"
#include "common/harness/steps.hpp"
#include "common/text.hpp"

#include <string>

using tutorial::Prediction;

namespace {

// The walkthrough `runs` times: what it found (the last run), and the median of the second
// kernel read over the first, where the CPU's read came between them.
struct Rounds {
    Found found;
    double slower = 0.0;
};

Rounds run_rounds(std::size_t bytes, int device, int runs) {
    tutorial::StepTimes times;
    Rounds r;
    std::size_t wrong = 0;
    for (int i = 0; i < runs; ++i) {
        r.found = walkthrough(bytes, device);
        wrong += r.found.wrong;
    }
    r.found.wrong = wrong;
    if (r.found.concurrent_managed_access == 1) {
        r.slower = times.median_ms(read_after_cpu) / times.median_ms(resident_read);
    }
    return r;
}

// concurrentManagedAccess = 1: the cudaMemPrefetchAsync entry names a GPU as a destination whose
// concurrentManagedAccess is non-zero, and says the call will prefetch there. With 0 it requires
// the attribute but names no error for a GPU without it: observed (the walkthrough stops before
// the prefetch there, so the checks try it).
Prediction prefetch_accepted(const Found& f, int device) {
    cudaError_t status = f.prefetch;
    if (f.concurrent_managed_access == 0) {
        void* data = nullptr;
        CUDA_CHECK(cudaMallocManaged(&data, 1 << 20));
        status = cudaMemPrefetchAsync(data, 1 << 20, {cudaMemLocationTypeDevice, device}, 0,
                                      nullptr);
        (void)cudaGetLastError();  // a refusal is the answer here, not a failure
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaFree(data));
    }
    const std::string seen = std::string("cudaMemPrefetchAsync returned ") +
                             cudaGetErrorName(status);
    if (f.concurrent_managed_access != 0) {
        return {"concurrentManagedAccess",
                f.concurrent_managed_access,
                "cudaMemPrefetchAsync to the GPU is accepted",
                f.prefetch == cudaSuccess,
                seen,
                tutorial::Evidence::documented,
                "",
                tutorial::Entry{"Runtime API reference: cudaMemPrefetchAsync",
                                "cudaMemLocationTypeDevice concurrentManagedAccess", "will"}};
    }
    return {"concurrentManagedAccess",
            0,
            "a prefetch to the GPU is refused",
            status != cudaSuccess,
            seen,
            tutorial::Evidence::observed,
            "the cudaMemPrefetchAsync entry requires the attribute of the destination GPU but "
            "names no error for a GPU without it"};
}

// pageableMemoryAccess: the cudaMemAdvise entry lets the range be system-allocated pageable
// memory ("could also refer to"), provided the advice's own constraints hold: for a GPU as the
// preferred location, that the GPU's cudaDevAttrPageableMemoryAccess is non-zero. Where it is 1
// that permission is the promise tried (documented). Where it is 0 its error sentence speaks of
// an invalid system-allocated range, not of a device without the attribute: what this driver
// does is observed, tried in a child (so that a refusal is not reported against this process by
// compute-sanitizer), refused with exit code 10.
Prediction advice_on_malloc(const Found& f, int device) {
    if (f.pageable_memory_access == 1) {
        return {"pageableMemoryAccess",
                1,
                "cudaMemAdvise accepts malloc memory",
                f.advise_malloc == cudaSuccess,
                std::string("cudaMemAdvise(malloc memory) returned ") +
                    cudaGetErrorName(f.advise_malloc),
                tutorial::Evidence::documented,
                "",
                tutorial::Entry{"Runtime API reference: cudaMemAdvise",
                                "system-allocated pageable", "could"}};
    }
    const tutorial::ChildResult child =
        tutorial::run_child("advise_malloc", {std::to_string(device)});
    const std::size_t at = child.output.find("cudaMemAdvise");
    const std::string seen = at == std::string::npos
                                 ? "the child " + child.describe()
                                 : child.output.substr(at, child.output.find('\n', at) - at);
    return {"pageableMemoryAccess", f.pageable_memory_access,
            "cudaMemAdvise refuses malloc memory", child.exited && child.exit_code == 10, seen,
            tutorial::Evidence::observed,
            "the cudaMemAdvise entry returns an error for an invalid system-allocated range; it "
            "names none for a device whose cudaDevAttrPageableMemoryAccess is 0"};
}

// directManagedMemAccessFromHost, with the hint that asks for direct access (the Programming
// Guide, N.1.7): with 0 the CPU's read "will" fault and migrate the pages (将), so the next
// kernel read faults them back and takes several times a resident read; with 1 the CPU's read
// "does not trigger any migration" and the data "will" stay in GPU memory (将), and the two
// reads take about as long. A measurement:
// where it disagrees it is measured again, with fresh rounds, up to three times in all.
Prediction cpu_read_migrates(Rounds& r, std::size_t bytes, int device, int runs) {
    const tutorial::Entry migrates{"Programming Guide, N.1.7 Hardware Coherency",
                                   "directManagedMemAccessFromHost=0 页面错误 迁移", "将"};
    const tutorial::Entry stays{"Programming Guide, N.1.7 Hardware Coherency",
                                "directManagedMemAccessFromHost=1 GPU 内存", "将"};
    const int value = r.found.direct_managed_mem_access_from_host;
    const auto agrees = [&] { return (r.slower > 3.0) == (value == 0); };
    const bool judged = tutorial::why_timing_not_judged().empty();  // not under the sanitizer
    for (int attempt = 1; judged && attempt < tutorial::measure_attempts && !agrees(); ++attempt) {
        const std::size_t wrong = r.found.wrong;
        r = run_rounds(bytes, device, runs);
        r.found.wrong += wrong;
    }
    return {"directManagedMemAccessFromHost",
            value,
            value ? "with the AccessedBy(host) hint a CPU read leaves GPU-resident pages in place"
                  : "a CPU read takes GPU-resident pages to the host",
            r.found.wrong == 0 && agrees(),
            tutorial::format("the next kernel read took %.1fx a resident one", r.slower),
            tutorial::Evidence::timing,
            "",
            value ? stays : migrates};
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
    const std::size_t bytes = ctx.quick() ? (std::size_t{16} << 20) : (std::size_t{64} << 20);
    const int runs = 3;
    walkthrough(bytes, ctx.device);  // warm-up: the kernel's first launch loads its module
    Rounds r = run_rounds(bytes, ctx.device, runs);
    std::vector<Prediction> predictions = {prefetch_accepted(r.found, ctx.device),
                                           advice_on_malloc(r.found, ctx.device)};
    if (r.found.concurrent_managed_access == 1) {  // without it nothing migrates page by page
        predictions.push_back(cpu_read_migrates(r, bytes, ctx.device, runs));
    }
    return tutorial::check_predictions(
        ctx, predictions,
        tutorial::format("hostNativeAtomicSupported = %d (not tried here): 1 would keep GPU "
                         "atomics on host-mapped pages native.",
                         r.found.host_native_atomic_supported));
}

TUTORIAL_SECTION(properties, run_properties);
TUTORIAL_CHILD(advise_malloc, child_advise_malloc);
