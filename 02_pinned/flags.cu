// Section `flags`: every cudaHostAlloc and cudaHostRegister flag, what cudaHostGetFlags reports
// back, the device pointer of each allocation, and a kernel using it.
#include "common/check.hpp"
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

}  // namespace

tutorial::Result run_flags(tutorial::Context& ctx) {
    const std::size_t bytes = 1 << 20;
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const bool read_only_supported =
        tutorial::device_attribute(ctx.device, cudaDevAttrHostRegisterReadOnlySupported) == 1;
    const bool unified = tutorial::device_attribute(ctx.device, cudaDevAttrUnifiedAddressing) == 1;
    const bool registered_same_address =
        tutorial::device_attribute(ctx.device, cudaDevAttrCanUseHostPointerForRegisteredMem) == 1;
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
    int expected_rows = 0;
    int tried_rows = 0;
    std::uint32_t seed = 100;
    for (const Row& row : rows) {
        const bool read_only = row.registered && (row.flags & cudaHostRegisterReadOnly);
        const std::string asked =
            row.registered ? register_flag_names(row.flags) : alloc_flag_names(row.flags);
        if (read_only && !read_only_supported) {
            table.add_row({"cudaHostRegister", asked, "-", "-", "-", "-",
                           "hostRegisterReadOnlySupported is 0: not tried"});
            continue;
        }
        ++tried_rows;
        std::uint32_t* host = nullptr;
        if (row.registered) {
            host = static_cast<std::uint32_t*>(std::malloc(bytes));
            if (host == nullptr) return ctx.verdict(false, "malloc of 1 MiB failed");
            CUDA_CHECK(cudaHostRegister(host, bytes, row.flags));
        } else {
            CUDA_CHECK(cudaHostAlloc(&host, bytes, row.flags));
        }
        unsigned reported = 0;
        CUDA_CHECK(cudaHostGetFlags(&reported, host));
        std::uint32_t* device_view = nullptr;
        CUDA_CHECK(cudaHostGetDevicePointer(&device_view, host, 0));

        std::size_t wrong = 0;
        if (read_only) {
            fill_on_host(host, count, seed);
            wrong = mismatches_on_device(device_view, count, seed);
        } else {
            fill_on_device(device_view, count, seed);
            wrong = mismatches_on_host(host, count, seed);
        }
        ++seed;

        // The flags that must come back: what was asked for, in cudaHostAlloc's values
        // (registration's Portable and Mapped have the same values; ReadOnly has none), plus
        // Mapped, because with unified addressing every pinned range is mapped for the device.
        unsigned must_report = row.registered
                                   ? row.flags & (cudaHostRegisterPortable | cudaHostRegisterMapped)
                                   : row.flags;
        if (unified) must_report |= cudaHostAllocMapped;
        // The kernel may use the CPU's address itself when unified addressing covers the
        // allocation; for registered memory the device must also say it can.
        const bool same_address_expected = unified && (!row.registered || registered_same_address);
        const bool ok = (reported & must_report) == must_report && wrong == 0 &&
                        (!same_address_expected || device_view == host);
        expected_rows += ok ? 1 : 0;
        table.add_row({row.registered ? "cudaHostRegister" : "cudaHostAlloc", asked,
                       alloc_flag_names(reported),
                       device_view == host ? "same as host" : format("%p", (void*)device_view),
                       wrong != 0  ? format("%zu wrong", wrong)
                       : read_only ? "read what CPU wrote"
                                   : "wrote, CPU saw it",
                       ok ? "yes" : "NO", row.note});

        if (row.registered) {
            CUDA_CHECK(cudaHostUnregister(host));
            std::free(host);
        } else {
            CUDA_CHECK(cudaFreeHost(host));
        }
    }
    table.print();
    std::printf(
        "\nWith unified addressing (unifiedAddressing = %d here) every pinned range is mapped for\n"
        "the device at the address the CPU uses, whatever the flags said: the check above\n"
        "expects Mapped in every cudaHostGetFlags answer and the host pointer back from\n"
        "cudaHostGetDevicePointer. ReadOnly has no cudaHostAlloc value, so cudaHostGetFlags has\n"
        "no way to report it. Write code that runs without unified addressing as if the flags\n"
        "mattered (they do there), and keep WriteCombined for buffers the CPU only writes.\n",
        unified ? 1 : 0);
    return ctx.verdict(expected_rows == tried_rows,
                       format("%d of %d allocations reported the flags asked for and were "
                              "usable by a kernel through their device pointer",
                              expected_rows, tried_rows));
}
