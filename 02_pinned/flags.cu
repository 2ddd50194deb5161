// Section `flags`: every cudaHostAlloc and cudaHostRegister flag, what cudaHostGetFlags reports
// back, the device pointer of each allocation, and a kernel using it.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/patterns.hpp"
#include "common/report.hpp"
#include "sections.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

struct Row {
    bool registered;  // cudaHostRegister rather than cudaHostAlloc
    unsigned flags;
    const char* note;
};

// What this device promises about pinned memory.
struct Device {
    bool unified;                  // unifiedAddressing
    bool registered_same_address;  // canUseHostPointerForRegisteredMem
};

struct Outcome {
    unsigned reported;         // cudaHostGetFlags
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
    std::uint32_t* host = nullptr;
    if (row.registered) {
        host = static_cast<std::uint32_t*>(std::malloc(bytes));
        CUDA_CHECK(cudaHostRegister(host, bytes, row.flags));
    } else {
        CUDA_CHECK(cudaHostAlloc(&host, bytes, row.flags));
    }
    Outcome o{};
    CUDA_CHECK(cudaHostGetFlags(&o.reported, host));
    std::uint32_t* device_view = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&device_view, host, 0));
    if (read_only) {
        fill_on_host(host, count, seed);
        o.kernel_wrong = mismatches_on_device(device_view, count, seed);
    } else {
        fill_on_device(device_view, count, seed);
        o.kernel_wrong = mismatches_on_host(host, count, seed);
    }
    o.same_address = device_view == host;
    o.device_view = o.same_address ? "same as host" : format("%p", (void*)device_view);

    // The flags that must come back: what was asked for, in cudaHostAlloc's values
    // (registration's Portable and Mapped have the same values; ReadOnly has none), plus
    // Mapped, because with unified addressing every pinned range is mapped for the device.
    unsigned must_report = row.registered
                               ? row.flags & (cudaHostRegisterPortable | cudaHostRegisterMapped)
                               : row.flags;
    if (device.unified) must_report |= cudaHostAllocMapped;
    // The kernel may use the CPU's address itself when unified addressing covers the
    // allocation; for registered memory the device must also say it can.
    const bool same_address_expected =
        device.unified && (!row.registered || device.registered_same_address);
    o.ok = (o.reported & must_report) == must_report && o.kernel_wrong == 0 &&
           (!same_address_expected || o.same_address);
    if (row.registered) {
        CUDA_CHECK(cudaHostUnregister(host));
        std::free(host);
    } else {
        CUDA_CHECK(cudaFreeHost(host));
    }
    return o;
}

// How many rows showed each lesson of the section.
struct Counts {
    int tried = 0;
    int expected = 0;               // everything as expected
    int mapped = 0;                 // cudaHostGetFlags included Mapped
    int kernel = 0;                 // the kernel used the device pointer correctly
    int same_address = 0;           // the device pointer was the host pointer...
    int same_address_expected = 0;  // ...of this many rows where unified addressing promises it

    void add(const Outcome& o, bool same_address_promised) {
        ++tried;
        expected += o.ok ? 1 : 0;
        mapped += (o.reported & cudaHostAllocMapped) ? 1 : 0;
        kernel += o.kernel_wrong == 0 ? 1 : 0;
        same_address_expected += same_address_promised ? 1 : 0;
        same_address += same_address_promised && o.same_address ? 1 : 0;
    }
};

void claim_lessons(tutorial::Context& ctx, const Counts& n, bool unified) {
    const char* no_uva = unified ? "" : "unifiedAddressing is 0 on this device";
    ctx.claim(tutorial::observed("with unified addressing every pinned range is mapped, "
                                 "whatever the flags: cudaHostGetFlags says Mapped",
                                 n.mapped == n.tried,
                                 format("Mapped in %d of %d answers", n.mapped, n.tried),
                                 "the driver reports only the flags that were asked for"),
              no_uva);
    ctx.claim(
        tutorial::observed("the device pointer is the host pointer itself",
                           n.same_address == n.same_address_expected,
                           format("%d of %d allocations", n.same_address, n.same_address_expected),
                           "this driver maps pinned memory at a separate device address"),
        no_uva);
    ctx.claim(tutorial::observed(
        "a kernel uses every kind of pinned memory through cudaHostGetDevicePointer",
        n.kernel == n.tried, format("%d of %d kernels saw the right data", n.kernel, n.tried),
        "a pinned allocation the device cannot reach over the bus"));
}

}  // namespace

tutorial::Result run_flags(tutorial::Context& ctx) {
    const bool read_only_supported =
        tutorial::device_attribute(ctx.device, cudaDevAttrHostRegisterReadOnlySupported) == 1;
    const Device device{
        tutorial::device_attribute(ctx.device, cudaDevAttrUnifiedAddressing) == 1,
        tutorial::device_attribute(ctx.device, cudaDevAttrCanUseHostPointerForRegisteredMem) == 1};
    std::printf(
        "Each row pins 1 MiB with one set of flags, reads the flags back with cudaHostGetFlags,\n"
        "asks cudaHostGetDevicePointer for the address a kernel must use, and has a kernel use\n"
        "it: write a pattern the CPU then checks (read a pattern the CPU wrote, for "
        "ReadOnly).\n\n");
    const Row rows[] = {
        {false, cudaHostAllocDefault, "what cudaMallocHost does"},
        {false, cudaHostAllocPortable, "pinned for every CUDA context, not only this one"},
        {false, cudaHostAllocMapped, "mapped into the device's address space"},
        {false, cudaHostAllocWriteCombined, "uncached on the CPU: see `write_combined`"},
        {false, cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined,
         "PyCUDA's PORTABLE|DEVICEMAP|WRITECOMBINED"},
        {true, cudaHostRegisterDefault, "pins memory malloc returned"},
        {true, cudaHostRegisterPortable, "as Portable above"},
        {true, cudaHostRegisterMapped, "as Mapped above"},
        {true, cudaHostRegisterReadOnly, "the device will only read it"},
    };
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
        n.add(o, device.unified && (!row.registered || device.registered_same_address));
        table.add_row({call, asked, alloc_flag_names(o.reported), o.device_view,
                       o.kernel_wrong != 0 ? format("%zu wrong", o.kernel_wrong)
                       : read_only         ? "read what CPU wrote"
                                           : "wrote, CPU saw it",
                       o.ok ? "yes" : "NO", row.note});
    }
    table.print();
    std::printf(
        "\nWith unified addressing (unifiedAddressing = %d here) every pinned range is mapped for\n"
        "the device at the address the CPU uses, whatever the flags said: the check above\n"
        "expects Mapped in every cudaHostGetFlags answer and the host pointer back from\n"
        "cudaHostGetDevicePointer. ReadOnly has no cudaHostAlloc value, so cudaHostGetFlags has\n"
        "no way to report it. Write code that runs without unified addressing as if the flags\n"
        "mattered (they do there), and keep WriteCombined for buffers the CPU only writes.\n",
        device.unified ? 1 : 0);
    claim_lessons(ctx, n, device.unified);
    return ctx.verdict(n.expected == n.tried,
                       format("%d of %d allocations reported the flags asked for and were "
                              "usable by a kernel through their device pointer",
                              n.expected, n.tried));
}
