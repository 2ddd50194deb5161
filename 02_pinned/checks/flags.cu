// Checks of section flags: pins with every row of ../flags.cu, reads the flags and the device
// pointer back, has a kernel use it, and judges the addresses and the kernels' data.
#include "02_pinned/flags.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <initializer_list>
#include <string>

using tutorial::format;

namespace {

struct FlagName {
    unsigned bit;
    const char* name;
};

// "Portable|Mapped", or "Default" when no bit of `names` is set.
std::string flag_names(unsigned flags, std::initializer_list<FlagName> names) {
    std::string text;
    for (const FlagName& flag : names) {
        if (flags & flag.bit) text += (text.empty() ? "" : "|") + std::string(flag.name);
    }
    return text.empty() ? "Default" : text;
}

// cudaHostGetFlags answers in cudaHostAlloc's values, for registered memory too.
std::string alloc_flag_names(unsigned flags) {
    return flag_names(flags, {{cudaHostAllocPortable, "Portable"},
                              {cudaHostAllocMapped, "Mapped"},
                              {cudaHostAllocWriteCombined, "WriteCombined"}});
}

std::string register_flag_names(unsigned flags) {
    return flag_names(flags, {{cudaHostRegisterPortable, "Portable"},
                              {cudaHostRegisterMapped, "Mapped"},
                              {cudaHostRegisterReadOnly, "ReadOnly"}});
}

// What this device promises about pinned memory.
struct Device {
    bool unified;                  // unifiedAddressing
    bool registered_same_address;  // canUseHostPointerForRegisteredMem on every visible device
};

// Whether the Runtime API reference promises that a kernel may use the CPU's address. Its section
// "Unified Addressing" says so for cudaHostAlloc memory and names two exceptions with a device
// address of their own: write-combined memory and registered memory. The cudaHostRegister entry
// narrows the second: where every visible device has canUseHostPointerForRegisteredMem = 1,
// cudaHostGetDevicePointer returns the host pointer itself.
bool same_address_documented(const Row& row, const Device& device) {
    if (!device.unified) return false;
    if (row.registered) return device.registered_same_address;
    return (row.flags & cudaHostAllocWriteCombined) == 0;
}

struct Outcome {
    cudaError_t asked;         // cudaHostGetFlags (its reference entry: cudaHostAlloc memory)
    unsigned reported;         // what it answered
    bool same_address;         // cudaHostGetDevicePointer gave back the host pointer
    std::string device_view;   // that pointer, as printed
    std::size_t kernel_wrong;  // values the kernel wrote (or read) wrongly
    bool ok;
};

// Pins 1 MiB with the row's flags, reads them back, and has a kernel use the device pointer.
Outcome try_flags(const Row& row, std::uint32_t seed, const Device& device) {
    const std::size_t bytes = 1 << 20;
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const bool read_only = row.registered && (row.flags & cudaHostRegisterReadOnly);
    std::uint32_t* host = pin(row.registered, row.flags, bytes);
    Outcome o{};
    void* view = nullptr;
    // For registered memory cudaHostGetFlags's answer (or refusal) is what this driver does: not
    // checked, reported.
    o.asked = ask(host, &o.reported, &view);
    auto* device_view = static_cast<std::uint32_t*>(view);
    if (!row.registered) CUDA_CHECK(o.asked);
    o.kernel_wrong = use_from_kernel(host, device_view, count, read_only, seed);
    o.same_address = device_view == host;
    o.device_view = o.same_address ? "same as host" : format("%p", (void*)device_view);

    // cudaHostAlloc's flags must come back as asked; the kernel must have used the device
    // pointer correctly; where the reference promises one address, it must be the host's.
    const bool flags_back = row.registered || (o.reported & row.flags) == row.flags;
    o.ok = flags_back && o.kernel_wrong == 0 &&
           (!same_address_documented(row, device) || o.same_address);
    unpin(row.registered, host);
    return o;
}

// How many rows showed each lesson of the section.
struct Counts {
    int tried = 0;
    int expected = 0;               // everything as expected
    int answered = 0;               // cudaHostGetFlags answered...
    int mapped = 0;                 // ...and included Mapped
    int kernel = 0;                 // the kernel used the device pointer correctly
    int same_address = 0;           // the device pointer was the host pointer...
    int same_address_expected = 0;  // ...of this many rows where the reference promises it
    int exceptions = 0;             // rows allowed an address of their own...
    int exceptions_same = 0;        // ...that showed the host's all the same

    void add(const Outcome& o, bool same_address_promised) {
        ++tried;
        expected += o.ok ? 1 : 0;
        answered += o.asked == cudaSuccess ? 1 : 0;
        mapped += o.asked == cudaSuccess && (o.reported & cudaHostAllocMapped) ? 1 : 0;
        kernel += o.kernel_wrong == 0 ? 1 : 0;
        same_address_expected += same_address_promised ? 1 : 0;
        same_address += same_address_promised && o.same_address ? 1 : 0;
        exceptions += same_address_promised ? 0 : 1;
        exceptions_same += !same_address_promised && o.same_address ? 1 : 0;
    }
};

void claim_lessons(tutorial::Context& ctx, const Counts& n, bool unified) {
    const char* no_uva = unified ? "" : "unifiedAddressing is 0 on this device";
    ctx.claim(tutorial::documented(
                  "where the reference promises it, the device pointer is the host "
                  "pointer itself",
                  n.same_address == n.same_address_expected,
                  format("%d of %d allocations", n.same_address, n.same_address_expected),
                  "this driver maps pinned memory at a separate device address, "
                  "against the Runtime API reference's section Unified Addressing",
                  "Runtime API reference: Unified Addressing (Automatic Mapping of Host "
                  "Allocated Host Memory); cudaHostGetDevicePointer (registered memory, "
                  "where every device has canUseHostPointerForRegisteredMem = 1)"),
              no_uva);
    ctx.claim(tutorial::documented(
        "a kernel uses every kind of pinned memory through cudaHostGetDevicePointer",
        n.kernel == n.tried, format("%d of %d kernels saw the right data", n.kernel, n.tried),
        "a pinned allocation the device cannot reach over the bus",
        "Runtime API reference: cudaHostGetDevicePointer (the device pointer of mapped, pinned "
        "memory from cudaHostAlloc or cudaHostRegister); cudaHostRegister (Default memory is "
        "mapped under unified addressing); Unified Addressing"));
}

}  // namespace

tutorial::Result run_flags(tutorial::Context& ctx) {
    const bool read_only_supported =
        tutorial::device_attribute(ctx.device, cudaDevAttrHostRegisterReadOnlySupported) == 1;
    const Device device{tutorial::device_attribute(ctx.device, cudaDevAttrUnifiedAddressing) == 1,
                        tutorial::every_device_uses_host_pointer_for_registered()};
    std::printf(
        "Each row pins 1 MiB with one set of flags, reads the flags back with cudaHostGetFlags,\n"
        "asks cudaHostGetDevicePointer for the address a kernel must use, and has a kernel use\n"
        "it: write a pattern the CPU then checks (read a pattern the CPU wrote, for "
        "ReadOnly).\n\n");
    tutorial::Table table({{"call"},
                           {"flags asked for"},
                           {"cudaHostGetFlags"},
                           {"device pointer"},
                           {"kernel"},
                           {"as expected"},
                           {"meaning"}});
    Counts n;
    std::uint32_t seed = 100;
    for (const Row& row : rows) {
        const bool read_only = row.registered && (row.flags & cudaHostRegisterReadOnly);
        const char* call = row.registered ? "cudaHostRegister" : "cudaHostAlloc";
        const std::string asked =
            row.registered ? register_flag_names(row.flags) : alloc_flag_names(row.flags);
        if (read_only && !read_only_supported) {
            table.add_row(
                {call, asked, "-", "-", "-", "-", "hostRegisterReadOnlySupported is 0: not tried"});
            continue;
        }
        const Outcome o = try_flags(row, seed++, device);
        n.add(o, same_address_documented(row, device));
        const std::string answer =
            o.asked == cudaSuccess ? alloc_flag_names(o.reported) : cudaGetErrorName(o.asked);
        table.add_row({call, asked, answer, o.device_view,
                       o.kernel_wrong != 0 ? format("%zu wrong", o.kernel_wrong)
                       : read_only         ? "read what CPU wrote"
                                           : "wrote, CPU saw it",
                       o.ok ? "yes" : "NO", row.meaning});
    }
    table.print();
    std::printf(
        "\nWith unified addressing (unifiedAddressing = %d here) the Runtime API reference "
        "promises that\nmemory from cudaHostAlloc is reached by every GPU whatever the flags "
        "(section Unified\nAddressing), and that cudaHostRegister's Default already means mapped "
        "and portable. Its\nexceptions, with a device address of their own, are WriteCombined "
        "memory and registered\nmemory (the latter unless every GPU has "
        "canUseHostPointerForRegisteredMem = 1): for those a\nkernel takes what "
        "cudaHostGetDevicePointer returns, as every row above does.\n\n",
        device.unified ? 1 : 0);
    std::printf(
        "Observed on %s: %d of %d rows allowed an address of their own showed the host's;\n"
        "cudaHostGetFlags answered for %d of %d rows (the reference documents it only for "
        "cudaHostAlloc\nmemory) and said Mapped in %d of those. ReadOnly has no cudaHostAlloc "
        "value to report.\nKeep WriteCombined for buffers the CPU only writes.\n",
        tutorial::this_driver().c_str(), n.exceptions_same, n.exceptions, n.answered, n.tried,
        n.mapped);
    claim_lessons(ctx, n, device.unified);
    return ctx.verdict(n.expected == n.tried,
                       format("%d of %d allocations usable by a kernel through their device "
                              "pointer, with cudaHostAlloc's flags reported back as asked",
                              n.expected, n.tried));
}

TUTORIAL_SECTION(flags, run_flags);
