// Checks of section attributes: asks ../attributes.cu's question about one pointer of every kind,
// prints the answers as a table, and compares each with what the Runtime API reference promises.
#include "01_uva/attributes.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace {

const char* type_name(cudaMemoryType type) {
    switch (type) {
        case cudaMemoryTypeUnregistered: return "cudaMemoryTypeUnregistered";
        case cudaMemoryTypeHost: return "cudaMemoryTypeHost";
        case cudaMemoryTypeDevice: return "cudaMemoryTypeDevice";
        case cudaMemoryTypeManaged: return "cudaMemoryTypeManaged";
    }
    return "?";
}

// How an attribute's pointer field relates to the pointer we asked about.
std::string describe(const void* field, const void* pointer) {
    if (field == nullptr) return "NULL";
    if (field == pointer) return "same";
    return tutorial::format("%p", field);
}

// What the Runtime API reference promises about each pointer's attributes. Memory CUDA allocated
// or registered belongs to the device that was current (ours). Its section "Unified Addressing"
// says host memory from cudaMallocHost or cudaHostAlloc is reached by kernels at the address the
// CPU uses, and lists two exceptions with a device address of their own: write-combined memory
// and memory registered with cudaHostRegister. For registered memory the cudaHostRegister entry
// narrows it: where every visible device has canUseHostPointerForRegisteredMem = 1 the device
// address is the host address. Where a distinct address is allowed, only that one exists is
// promised, and a kernel must use what cudaHostGetDevicePointer returns.
enum class DeviceAddress { same, own_allowed };

struct Probe {
    const char* allocation;
    const void* pointer;
    cudaMemoryType expected;
    DeviceAddress address = DeviceAddress::same;
};

bool as_documented(const Probe& probe, cudaError_t status, const cudaPointerAttributes& a,
                   int device) {
    if (status != cudaSuccess || a.type != probe.expected) return false;
    switch (probe.expected) {
        case cudaMemoryTypeDevice:
            // hostPointer is NULL where the host cannot reach device memory directly (a PCIe
            // host); a hardware-coherent host may reach it, at the same address.
            return a.device == device && a.devicePointer == probe.pointer &&
                   (a.hostPointer == nullptr || a.hostPointer == probe.pointer);
        case cudaMemoryTypeHost:
            return a.device == device && a.hostPointer == probe.pointer &&
                   a.devicePointer != nullptr &&
                   (a.devicePointer == probe.pointer ||
                    probe.address == DeviceAddress::own_allowed);
        case cudaMemoryTypeManaged:
            return a.devicePointer == probe.pointer && a.hostPointer == probe.pointer;
        case cudaMemoryTypeUnregistered:
            return true;  // CUDA knows nothing about it: only the type is promised
    }
    return false;
}

// What the probes found, counted for the section's three lessons: CUDA's own memory is recognised
// from its address, pinned memory the documentation gives one address has it, memory CUDA never
// saw is not an error. The exceptions are counted apart: what they showed is this driver's.
struct Tally {
    int wrong = 0;
    int cuda_owned = 0, cuda_owned_ok = 0;
    int pinned = 0, pinned_one_address = 0;
    int exceptions = 0, exceptions_same = 0;
    int foreign = 0, foreign_ok = 0;
};

// Asks cudaPointerGetAttributes about one pointer of every kind and prints what it answers.
Tally probe_every_kind(int device, bool registered_same_address, bool pageable_access) {
    const Allocations m;
    int on_the_stack[16] = {};
    const DeviceAddress registered =
        registered_same_address ? DeviceAddress::same : DeviceAddress::own_allowed;
    const std::vector<Probe> probes = {
        {"cudaMalloc", m.device, cudaMemoryTypeDevice},
        {"cudaMallocHost", m.malloc_host, cudaMemoryTypeHost},
        {"cudaHostAlloc(Default)", m.host_default, cudaMemoryTypeHost},
        {"cudaHostAlloc(Portable)", m.host_portable, cudaMemoryTypeHost},
        {"cudaHostAlloc(Mapped)", m.host_mapped, cudaMemoryTypeHost},
        {"cudaHostAlloc(WriteCombined)", m.host_write_combined, cudaMemoryTypeHost,
         DeviceAddress::own_allowed},
        {"malloc + cudaHostRegister", m.registered, cudaMemoryTypeHost, registered},
        {"cudaMallocManaged", m.managed, cudaMemoryTypeManaged},
        {"__managed__ variable", managed_global, cudaMemoryTypeManaged},
        {"malloc", m.plain_malloc, cudaMemoryTypeUnregistered},
        {"new[]", m.plain_new, cudaMemoryTypeUnregistered},
        {"stack array", on_the_stack, cudaMemoryTypeUnregistered},
    };
    tutorial::Table table({{"allocation"},
                           {"address"},
                           {"returns"},
                           {"type"},
                           {"device", tutorial::Align::right},
                           {"devicePointer"},
                           {"hostPointer"},
                           {"as documented"}});
    Tally t;
    for (const Probe& probe : probes) {
        cudaPointerAttributes a{};
        const cudaError_t status = ask(probe.pointer, &a);
        const bool ok = as_documented(probe, status, a, device);
        t.wrong += ok ? 0 : 1;
        if (probe.expected == cudaMemoryTypeUnregistered) {
            ++t.foreign;
            // No device address for it, unless the device reaches pageable memory directly.
            t.foreign_ok += ok && (a.devicePointer == nullptr || pageable_access);
        } else {
            ++t.cuda_owned;
            t.cuda_owned_ok += ok;
        }
        if (probe.expected == cudaMemoryTypeHost && probe.address == DeviceAddress::same) {
            ++t.pinned;
            t.pinned_one_address += ok && a.devicePointer == probe.pointer;
        }
        if (probe.expected == cudaMemoryTypeHost && probe.address == DeviceAddress::own_allowed) {
            ++t.exceptions;
            t.exceptions_same += a.devicePointer == probe.pointer;
        }
        table.add_row({probe.allocation, tutorial::format("%p", probe.pointer),
                       cudaGetErrorName(status), type_name(a.type), std::to_string(a.device),
                       describe(a.devicePointer, probe.pointer),
                       describe(a.hostPointer, probe.pointer), ok ? "yes" : "NO"});
    }
    table.print();
    std::printf(
        "\n\"same\" means the field equals the pointer we asked about. Memory CUDA never saw "
        "(malloc, new,\nthe stack) is not an error since CUDA 11: it is reported as "
        "unregistered.\n\n");
    if (t.exceptions > 0) {
        std::printf(
            "Write-combined memory%s may have a device address of its own: the Runtime API "
            "reference\n(Unified Addressing, \"Exceptions, Disjoint Addressing\") says so. "
            "%d of %d such buffers showed\nthe host address here (observed on %s); portable "
            "code passes kernels what\ncudaHostGetDevicePointer returns for them.\n\n",
            registered_same_address ? "" : " and registered memory", t.exceptions_same,
            t.exceptions, tutorial::this_driver().c_str());
    }
    return t;
}

}  // namespace

tutorial::Result run_attributes(tutorial::Context& ctx) {
    const int uva = unified_addressing(ctx.device);
    // Every answer this section expects is the one a unified address space gives.
    if (uva != 1) return ctx.skip("unifiedAddressing is 0: no unified address space here");
    std::printf(
        "unifiedAddressing = %d: the host and every GPU share one 64-bit virtual address space, so "
        "CUDA can tell\nfrom the address alone which allocation (and which device) a pointer "
        "belongs to.\n\n",
        uva);

    const bool pageable_access =
        tutorial::device_attribute(ctx.device, cudaDevAttrPageableMemoryAccess) == 1;
    // Registered memory's device address is the cudaHostRegister entry's matter (its own claim
    // comes with cudaHostGetDevicePointer); here it counts with the exceptions.
    const Tally t = probe_every_kind(ctx.device, false, pageable_access);
    // cudaPointerGetAttributes: the type is cudaMemoryTypeHost, cudaMemoryTypeDevice or
    // cudaMemoryTypeManaged for the memory CUDA made, and `device` the device it was made on.
    ctx.claim(tutorial::documented(
        "names_every_allocation",
        "from the address alone, CUDA names the type and device of every allocation it made",
        t.cuda_owned_ok == t.cuda_owned,
        tutorial::format("%d of %d CUDA allocations reported as documented", t.cuda_owned_ok,
                         t.cuda_owned),
        "this driver predates unified addressing, or an allocation was made on another device",
        tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes",
                        "cudaMemoryTypeHost cudaMemoryTypeDevice cudaMemoryTypeManaged", "can"}));
    // The reference's Unified Addressing: memory from cudaMallocHost and cudaHostAlloc is reached
    // by kernels at the pointer value the host uses (write-combined memory excepted).
    ctx.claim(tutorial::documented(
        "pinned_one_address",
        "pinned memory the Runtime API reference gives one address has it: devicePointer == the "
        "host pointer",
        t.pinned > 0 && t.pinned_one_address == t.pinned,
        tutorial::format("%d of %d pinned buffers", t.pinned_one_address, t.pinned),
        "the driver maps pinned memory at a separate device address, against the reference's "
        "section Unified Addressing",
        tutorial::Entry{"Runtime API reference: Unified Addressing", "cudaMallocHost cudaHostAlloc",
                        "is"}));
    // The note of cudaPointerGetAttributes: from CUDA 11.0 a host pointer CUDA does not know
    // gives cudaMemoryTypeUnregistered, and the call cudaSuccess.
    ctx.claim(tutorial::documented(
        "unknown_is_unregistered",
        "asking about memory CUDA never saw is not an error: it is cudaMemoryTypeUnregistered",
        t.foreign_ok == t.foreign,
        tutorial::format("%d of %d malloc/new/stack pointers: cudaSuccess, unregistered%s",
                         t.foreign_ok, t.foreign, pageable_access ? "" : ", no device pointer"),
        "a CUDA runtime older than 11.0, which returned cudaErrorInvalidValue here",
        tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes",
                        "cudaMemoryTypeUnregistered cudaSuccess", "will"}));
    const int total = t.cuda_owned + t.foreign;
    return ctx.verdict(t.wrong == 0,
                       tutorial::format("%d of %d pointer kinds report the documented type, "
                                        "device and addresses",
                                        total - t.wrong, total));
}

TUTORIAL_SECTION(attributes, run_attributes);
