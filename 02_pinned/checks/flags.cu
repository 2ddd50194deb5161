// Checks of section flags: runs the walkthrough of ../flags.cu (every row pinned, its flags and
// device pointer read back, a kernel using it), tables the rows, and judges the addresses and the
// kernels' data where the reference promises them.
#include "02_pinned/flags.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

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

// How many rows showed each lesson of the section, for cudaHostAlloc ([0]) and cudaHostRegister
// ([1]) memory.
struct Counts {
    int tried[2] = {};
    int kernel[2] = {};           // the kernel used the device pointer correctly
    int promised[2] = {};         // rows where the reference promises the host's address...
    int same[2] = {};             // ...that showed it
    int exceptions = 0;           // rows allowed an address of their own...
    int exceptions_same = 0;      // ...that showed the host's all the same
    int flags_back = 0;           // cudaHostAlloc rows whose asked flags came back
    int registered_answered = 0;  // cudaHostRegister rows cudaHostGetFlags answered for...
    int registered_refused = 0;   // ...and those it refused

    void add(const Row& row, const RowFound& r, bool promised_same) {
        const int k = row.registered ? 1 : 0;
        ++tried[k];
        kernel[k] += r.wrong == 0 ? 1 : 0;
        promised[k] += promised_same ? 1 : 0;
        same[k] += promised_same && r.same_address ? 1 : 0;
        exceptions += promised_same ? 0 : 1;
        exceptions_same += !promised_same && r.same_address ? 1 : 0;
        if (!row.registered)
            flags_back += r.asked == cudaSuccess && (r.reported & row.flags) == row.flags;
        else if (r.asked == cudaSuccess)
            ++registered_answered;
        else
            ++registered_refused;
    }
};

Counts tabulate(const std::vector<RowFound>& found, const Device& device) {
    tutorial::Table table({{"call"},
                           {"flags asked for"},
                           {"cudaHostGetFlags"},
                           {"device pointer"},
                           {"kernel"},
                           {"meaning"}});
    Counts n;
    for (std::size_t i = 0; i < found.size(); ++i) {
        const Row& row = rows[i];
        const RowFound& r = found[i];
        const bool read_only = row.registered && (row.flags & cudaHostRegisterReadOnly);
        const char* call = row.registered ? "cudaHostRegister" : "cudaHostAlloc";
        const std::string asked =
            row.registered ? register_flag_names(row.flags) : alloc_flag_names(row.flags);
        if (!r.tried) {
            table.add_row({call, asked, "-", "-", "-", "hostRegisterReadOnlySupported is 0"});
            continue;
        }
        n.add(row, r, same_address_documented(row, device));
        table.add_row(
            {call, asked,
             r.asked == cudaSuccess ? alloc_flag_names(r.reported) : cudaGetErrorName(r.asked),
             r.same_address ? "same as host" : "its own",
             r.wrong != 0 ? format("%zu wrong", r.wrong)
             : read_only  ? "read what CPU wrote"
                          : "wrote, CPU saw it",
             row.meaning});
    }
    table.print();
    return n;
}

void claim_addresses(tutorial::Context& ctx, const Counts& n, const Device& device) {
    const char* no_uva = device.unified ? "" : "unifiedAddressing is 0 on this device";
    const char* mixed = !device.unified ? no_uva
                        : device.registered_same_address
                            ? ""
                            : "not every visible GPU has canUseHostPointerForRegisteredMem = 1: "
                              "then registered memory has an address of its own";
    ctx.claim(
        tutorial::documented(
            "alloc_same_address",
            "cudaHostAlloc memory without WriteCombined has the host's address on the device",
            n.same[0] == n.promised[0], format("%d of %d allocations", n.same[0], n.promised[0]),
            "this driver maps pinned memory at a separate device address, against the "
            "Runtime API reference's section Unified Addressing",
            tutorial::Entry{"Runtime API reference: Unified Addressing",
                            "kernels host", "is the same"}),
        no_uva);
    ctx.claim(
        tutorial::documented(
            "registered_same_address",
            "where all GPUs have canUseHostPointerForRegisteredMem = 1, registered memory keeps "
            "its host address",
            n.same[1] == n.promised[1], format("%d of %d registrations", n.same[1], n.promised[1]),
            "cudaHostGetDevicePointer gave registered memory an address of its own",
            tutorial::Entry{"Runtime API reference: cudaHostRegister",
                            "cudaHostGetDevicePointer all non-zero", "will"}),
        mixed);
    ctx.claim(
        tutorial::documented("alloc_reachable",
                             "a kernel uses cudaHostAlloc memory of every flag through "
                             "cudaHostGetDevicePointer",
                             n.kernel[0] == n.tried[0],
                             format("%d of %d kernels saw the right data", n.kernel[0], n.tried[0]),
                             "a pinned allocation the device cannot reach over the bus",
                             tutorial::Entry{"Runtime API reference: Unified Addressing",
                                             "cudaMallocHost cudaHostAlloc", "is always"}),
        no_uva);
    // Judged where every visible GPU has canUseHostPointerForRegisteredMem = 1. The
    // cudaHostRegister entry promises that on such a device the memory can be accessed from the
    // device through the host pointer itself; that cudaHostGetDevicePointer then gives back that
    // very pointer is the claim above (registered_same_address), so the kernels' pointer is it.
    ctx.claim(tutorial::documented(
                  "registered_reachable",
                  "a kernel uses cudaHostRegister memory of every flag through "
                  "cudaHostGetDevicePointer",
                  n.kernel[1] == n.tried[1],
                  format("%d of %d kernels saw the right data", n.kernel[1], n.tried[1]),
                  "a registration the device cannot reach over the bus",
                  tutorial::Entry{"Runtime API reference: cudaHostRegister",
                                  "cudaDevAttrCanUseHostPointerForRegisteredMem non-zero "
                                  "accessed host pointer",
                                  "can"}),
              mixed);
}

void claim_get_flags(tutorial::Context& ctx, const Counts& n) {
    // The cudaHostGetFlags entry passes back the flags used to allocate: every flag asked for is
    // among them. Which others it adds it does not say (with unified addressing this driver adds
    // Mapped to every row), so the check is that the asked ones are there.
    ctx.claim(tutorial::documented(
        "flags_read_back",
        "cudaHostGetFlags passes back every flag cudaHostAlloc was asked for",
        n.flags_back == n.tried[0], format("%d of %d allocations", n.flags_back, n.tried[0]),
        "a flag the allocation asked for was not recorded",
        tutorial::Entry{"Runtime API reference: cudaHostGetFlags", "cudaHostAlloc",
                        "passes back"}));
    // For registered memory the entry's letter promises a failure ("will fail if the input
    // pointer does not reside in an address range allocated by cudaHostAlloc()"), and this
    // driver answers instead: no claim (a refusal would FAIL every driver seen so far, an
    // answer is not what the entry says), only the departure, shown as found.
    std::printf("cudaHostGetFlags on registered memory: answered for %d registrations, refused "
                "%d (%s); its entry promises failure outside cudaHostAlloc's ranges: do "
                "not rely on either.\n",
                n.registered_answered, n.registered_refused, tutorial::this_driver().c_str());
}

}  // namespace

tutorial::Result run_flags(tutorial::Context& ctx) {
    const Device device{tutorial::device_attribute(ctx.device, cudaDevAttrUnifiedAddressing) == 1,
                        tutorial::every_device_uses_host_pointer_for_registered()};
    std::printf(
        "Each row pins 1 MiB with one set of flags, reads the flags back with cudaHostGetFlags,\n"
        "asks cudaHostGetDevicePointer for the address a kernel must use, and has a kernel use\n"
        "it: write a pattern the CPU then checks (read a pattern the CPU wrote, for "
        "ReadOnly).\n\n");
    const std::vector<RowFound> found = walkthrough(ctx.device);
    const Counts n = tabulate(found, device);
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
        "Observed on %s: %d of %d rows allowed an address of their own showed the host's.\n"
        "ReadOnly has no cudaHostAlloc value to report. Keep WriteCombined for buffers the CPU\n"
        "only writes.\n\n",
        tutorial::this_driver().c_str(), n.exceptions_same, n.exceptions);
    claim_addresses(ctx, n, device);
    claim_get_flags(ctx, n);
    const int tried = n.tried[0] + n.tried[1];
    const bool alloc_ok =
        !device.unified || (n.kernel[0] == n.tried[0] && n.same[0] == n.promised[0]);
    const bool registered_ok = !device.unified || !device.registered_same_address ||
                               (n.kernel[1] == n.tried[1] && n.same[1] == n.promised[1]);
    return ctx.verdict(alloc_ok && registered_ok,
                       format("%d of %d allocations usable by a kernel through their device "
                              "pointer, at the host's address where the reference promises it",
                              n.kernel[0] + n.kernel[1], tried));
}

TUTORIAL_SECTION(flags, run_flags);
