// Checks of section properties: runs ../properties.cpp's walkthrough (the attributes, and
// managedMemory's round trip), tries what concurrentManagedAccess and pageableMemoryAccess predict
// through the children of the concurrency and system_allocator sections, and judges each
// prediction.
#include "03_managed/properties.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/predictions.hpp"
#include "common/patterns.hpp"

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

using tutorial::Prediction;

namespace {

// managedMemory: the walkthrough's allocation that a kernel writes and the CPU then reads, with no
// copy. The cudaMallocManaged entry ties the attribute to both outcomes: where it is 0 the call
// returns cudaErrorNotSupported; where it is 1 the pointer is valid on the CPU and on the GPUs.
Prediction managed_round_trip(const Found& found) {
    const int value = found.prop.managedMemory;
    const bool worked = found.managed == cudaSuccess && found.wrong == 0;
    const std::string seen =
        found.managed != cudaSuccess
            ? std::string("cudaMallocManaged returned ") + cudaGetErrorName(found.managed)
        : worked ? "the CPU read all 65536 values the kernel wrote"
                 : "the CPU read WRONG values";
    const tutorial::Entry valid_on_all{"Runtime API reference: cudaMallocManaged", "CPU GPUs",
                                       "is valid"};
    const tutorial::Entry not_supported{"Runtime API reference: cudaMallocManaged",
                                        "cudaErrorNotSupported doesn't support", "is returned"};
    return {"managedMemory",
            value,
            value ? "a kernel's writes to cudaMallocManaged memory are read by the CPU"
                  : "cudaMallocManaged returns cudaErrorNotSupported",
            value ? worked : found.managed == cudaErrorNotSupported,
            seen,
            tutorial::Evidence::documented,
            "",
            value ? valid_on_all : not_supported};
}

// concurrentManagedAccess: the `concurrency` section's child writes managed memory while a kernel
// runs. 1: the attribute's own description (the device can access managed memory coherently,
// concurrently with the CPU). 0: the Unified Memory appendix (N.2.2.1) says such a write will be
// a segmentation fault (会), even to memory the kernel does not use.
Prediction concurrent_write(int value, const tutorial::ChildResult& touch) {
    const std::string seen = "a child that tried: " + touch.describe();
    if (value) {
        return {"concurrentManagedAccess",
                value,
                "the CPU may write managed memory while a kernel runs",
                touch.succeeded(),
                seen,
                tutorial::Evidence::documented,
                "",
                tutorial::Entry{"Runtime API reference: cudaDevAttrConcurrentManagedAccess", "CPU",
                                "can"}};
    }
    return {"concurrentManagedAccess",
            value,
            "a CPU write to managed memory during a kernel is a segmentation fault",
            touch.crashed() && touch.signal == SIGSEGV,
            seen,
            tutorial::Evidence::documented,
            "",
            tutorial::Entry{"Programming Guide, N.2.2.1 GPU Exclusive Access To Managed Memory",
                            "CPU/GPU", "会"}};
}

// pageableMemoryAccess: the `system_allocator` section's child runs a kernel on malloc memory.
// 1: the attribute's entry says the device supports coherent access to pageable memory without
// cudaHostRegister (the Guide, N.1.6, names malloc memory among it): documented. 0: the attribute
// only withholds that and no entry names an error for trying, so the fault this driver gives is
// observed.
Prediction malloc_in_kernel(int value, const tutorial::ChildResult& system) {
    const bool illegal_address = system.failed_with("cudaErrorIllegalAddress");
    const std::string seen =
        "a child that tried: " +
        (illegal_address ? std::string("cudaErrorIllegalAddress") : system.describe());
    if (value) {
        return {"pageableMemoryAccess",
                value,
                "a kernel can use memory from malloc",
                system.succeeded(),
                seen,
                tutorial::Evidence::documented,
                "",
                tutorial::Entry{"Runtime API reference: cudaDevAttrPageableMemoryAccess",
                                "pageable without cudaHostRegister", "supports"}};
    }
    return {"pageableMemoryAccess",
            value,
            "a kernel on malloc memory stops with cudaErrorIllegalAddress",
            illegal_address,
            seen,
            tutorial::Evidence::observed,
            "the attribute at 0 withholds a promise; it names no error for trying"};
}

}  // namespace

tutorial::Result run_properties(tutorial::Context& ctx) {
    const Found found = walkthrough(ctx.device);
    const cudaDeviceProp& prop = found.prop;
    const std::vector<std::string> device = {std::to_string(ctx.device)};

    // The same children the `concurrency` and `system_allocator` sections run.
    const tutorial::ChildResult touch = tutorial::run_child("touch_during_kernel", device);
    const tutorial::ChildResult system =
        tutorial::run_child("system_memory", {device[0], "malloc"});

    const std::vector<Prediction> predictions = {
        managed_round_trip(found),
        concurrent_write(prop.concurrentManagedAccess, touch),
        malloc_in_kernel(prop.pageableMemoryAccess, system),
    };
    return tutorial::check_predictions(
        ctx, predictions,
        std::string("Not tried here: directManagedMemAccessFromHost = ") +
            std::to_string(prop.directManagedMemAccessFromHost) +
            " (chapter 05 shows it), hostNativeAtomicSupported = " +
            std::to_string(prop.hostNativeAtomicSupported) +
            ".\nThis system: " + unified_memory_kind(prop) + ".");
}

TUTORIAL_SECTION(properties, run_properties);
