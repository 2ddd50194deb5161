// Checks of section attributes: runs ../attributes.cu's walkthrough, prints
// cudaPointerGetAttributes' answer about every pointer as a table, and compares each with what the
// Runtime API reference promises.
#include "01_uva/attributes.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <cstring>
#include <string>

namespace {

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
// and memory registered with cudaHostRegister (whose entry ties that address to
// canUseHostPointerForRegisteredMem: a claim below). Where a distinct address is allowed, only
// that one exists is promised here.
enum class DeviceAddress { same, own_allowed };

struct Expected {
    const char* allocation;  // as the walkthrough names it
    cudaMemoryType type;
    DeviceAddress address = DeviceAddress::same;
};

const Expected expected[] = {
    {"cudaMalloc", cudaMemoryTypeDevice},
    {"cudaMallocHost", cudaMemoryTypeHost},
    {"cudaHostAlloc(Default)", cudaMemoryTypeHost},
    {"cudaHostAlloc(Portable)", cudaMemoryTypeHost},
    {"cudaHostAlloc(Mapped)", cudaMemoryTypeHost},
    {"cudaHostAlloc(WriteCombined)", cudaMemoryTypeHost, DeviceAddress::own_allowed},
    {"malloc + cudaHostRegister", cudaMemoryTypeHost, DeviceAddress::own_allowed},
    {"cudaMallocManaged", cudaMemoryTypeManaged},
    {"__managed__ variable", cudaMemoryTypeManaged},
    {"malloc", cudaMemoryTypeUnregistered},
    {"new[]", cudaMemoryTypeUnregistered},
    {"stack array", cudaMemoryTypeUnregistered},
};

const Expected& expected_for(const Answer& answer) {
    for (const Expected& e : expected) {
        if (std::strcmp(e.allocation, answer.allocation) == 0) return e;
    }
    std::fprintf(stderr, "checks: the walkthrough asked about %s, which they do not know\n",
                 answer.allocation);
    std::exit(1);
}

bool as_documented(const Expected& e, const Answer& answer, int device) {
    const cudaPointerAttributes& a = answer.attributes;
    const void* pointer = answer.pointer;
    if (answer.status != cudaSuccess || a.type != e.type) return false;
    switch (e.type) {
        case cudaMemoryTypeDevice:
            // hostPointer is NULL where the host cannot reach device memory directly (a PCIe
            // host); a hardware-coherent host may reach it, at the same address.
            return a.device == device && a.devicePointer == pointer &&
                   (a.hostPointer == nullptr || a.hostPointer == pointer);
        case cudaMemoryTypeHost:
            return a.device == device && a.hostPointer == pointer && a.devicePointer != nullptr &&
                   (a.devicePointer == pointer || e.address == DeviceAddress::own_allowed);
        case cudaMemoryTypeManaged: return a.devicePointer == pointer && a.hostPointer == pointer;
        case cudaMemoryTypeUnregistered:
            return true;  // CUDA knows nothing about it: only the type is promised
    }
    return false;
}

// What the answers showed, counted for the section's lessons: CUDA's own memory is recognised
// from its address, pinned memory the documentation gives one address has it, memory CUDA never
// saw is not an error.
struct Tally {
    int wrong = 0;
    int cuda_owned = 0, cuda_owned_ok = 0;
    int pinned = 0, pinned_one_address = 0;
    int foreign = 0, foreign_ok = 0;
};

Tally print_answers(const Found& found, int device, bool pageable_access) {
    tutorial::Table table({{"allocation"},
                           {"address"},
                           {"returns"},
                           {"type"},
                           {"device", tutorial::Align::right},
                           {"devicePointer"},
                           {"hostPointer"},
                           {"as documented"}});
    Tally t;
    for (const Answer& answer : found.answers) {
        const Expected& e = expected_for(answer);
        const cudaPointerAttributes& a = answer.attributes;
        const bool ok = as_documented(e, answer, device);
        t.wrong += ok ? 0 : 1;
        if (e.type == cudaMemoryTypeUnregistered) {
            ++t.foreign;
            // No device address for it, unless the device reaches pageable memory directly.
            t.foreign_ok += ok && (a.devicePointer == nullptr || pageable_access);
        } else {
            ++t.cuda_owned;
            t.cuda_owned_ok += ok;
        }
        if (e.type == cudaMemoryTypeHost && e.address == DeviceAddress::same) {
            ++t.pinned;
            t.pinned_one_address += ok && a.devicePointer == answer.pointer;
        }
        table.add_row({answer.allocation, tutorial::format("%p", answer.pointer),
                       cudaGetErrorName(answer.status), tutorial::memory_type_name(a.type),
                       std::to_string(a.device), describe(a.devicePointer, answer.pointer),
                       describe(a.hostPointer, answer.pointer), ok ? "yes" : "NO"});
    }
    table.print();
    std::printf(
        "\n\"same\" means the field equals the pointer we asked about. Memory CUDA never saw "
        "(malloc, new,\nthe stack) is not an error since CUDA 11: it is reported as "
        "unregistered.\n\n");
    return t;
}

void claim_exceptions(tutorial::Context& ctx, const Found& found) {
    std::printf(
        "The two exceptions, asked with cudaHostGetDevicePointer: write-combined %s, registered "
        "%s.\n\n",
        describe(found.write_combined_on_device, found.write_combined).c_str(),
        describe(found.registered_on_device, found.registered).c_str());
    // The cudaHostRegister entry: where every visible device has a non-zero
    // canUseHostPointerForRegisteredMem, the pointer cudaHostGetDevicePointer returns will match
    // the host pointer ptr (where one has 0, it will not).
    const bool every_device = tutorial::every_device_uses_host_pointer_for_registered();
    ctx.claim(
        tutorial::documented("registered_at_host_address",
                             "where every GPU has canUseHostPointerForRegisteredMem = 1, "
                             "cudaHostGetDevicePointer gives registered memory its host address",
                             found.registered_on_device == found.registered,
                             "returned " + describe(found.registered_on_device, found.registered),
                             "the driver gave registered memory a device address of its own",
                             tutorial::Entry{"Runtime API reference: cudaHostRegister",
                                             "cudaHostGetDevicePointer ptr non-zero", "will"}),
        every_device ? ""
                     : "a GPU here has canUseHostPointerForRegisteredMem = 0: then the "
                       "entry gives registered memory a device address of its own");
    ctx.claim(tutorial::observed(
        "write_combined_address",
        "cudaHostGetDevicePointer gives write-combined memory its host address too",
        found.write_combined_on_device == found.write_combined,
        "returned " + describe(found.write_combined_on_device, found.write_combined),
        "the reference's Unified Addressing section names write-combined memory an exception "
        "with a device address of its own, to be asked with cudaHostGetDevicePointer, and "
        "promises no value for it: portable code passes kernels what that call returns"));
}

}  // namespace

tutorial::Result run_attributes(tutorial::Context& ctx) {
    const Found found = walkthrough(ctx.device);
    // Every answer this section expects is the one a unified address space gives.
    if (found.unified_addressing != 1)
        return ctx.skip("unifiedAddressing is 0: no unified address space here");
    std::printf(
        "unifiedAddressing = %d: the host and every GPU share one 64-bit virtual address space, so "
        "CUDA can tell\nfrom the address alone which allocation (and which device) a pointer "
        "belongs to.\n\n",
        found.unified_addressing);
    const bool pageable_access =
        tutorial::device_attribute(ctx.device, cudaDevAttrPageableMemoryAccess) == 1;
    const Tally t = print_answers(found, ctx.device, pageable_access);

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
        "where the reference gives pinned memory one address, its device pointer is the host "
        "pointer",
        t.pinned > 0 && t.pinned_one_address == t.pinned,
        tutorial::format("%d of %d pinned buffers", t.pinned_one_address, t.pinned),
        "the driver maps pinned memory at a separate device address, against the reference's "
        "section Unified Addressing",
        tutorial::Entry{"Runtime API reference: Unified Addressing", "kernels host",
                        "is the same"}));
    claim_exceptions(ctx, found);
    // The note of cudaPointerGetAttributes: from CUDA 11.0 a host pointer CUDA does not know
    // gives cudaMemoryTypeUnregistered, and the call cudaSuccess.
    ctx.claim(tutorial::documented(
        "unknown_is_unregistered",
        "asking about memory CUDA never saw succeeds and answers cudaMemoryTypeUnregistered",
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
