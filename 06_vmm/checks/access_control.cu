// Checks of section access_control: runs the walkthrough of ../access_control.cu, then each of
// its two mistakes in a child process (their kernels fault, which would end this one).
#include "06_vmm/access_control.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdlib>
#include <string>
#include <vector>

using tutorial::ChildResult;
using tutorial::format;

namespace {

// The Guide's E.7: mapping does not make the addresses accessible, and a kernel touching them
// then crashes the program (會, "will"); cuMemSetAccess allows or restricts a device's access to
// the mapped range (允許, "allows"), which the user must use to choose it.
const tutorial::Entry not_by_mapping{"Programming Guide, E.7 Control Access Rights", "cuMemMap",
                                     "會"};
const tutorial::Entry by_set_access{"Programming Guide, E.7 Control Access Rights",
                                    "cuMemSetAccess", "允许"};

bool ended_early(const ChildResult& child, const char* after) {
    return !child.succeeded() && !child.timed_out && child.output.find(after) == std::string::npos;
}

}  // namespace

// Child role: a kernel reads a range that was mapped but never given access.
int child_no_access(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    std::printf("mapped, no cuMemSetAccess; a kernel reads it...\n");
    std::fflush(stdout);
    read_before_grant(device);
    std::printf("the kernel finished\n");
    return 0;
}

// Child role: a kernel writes one value to a PROT_READ range.
int child_read_only(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    std::printf("cuMemSetAccess(PROT_READ); a kernel writes one value...\n");
    std::fflush(stdout);
    write_read_only(device);
    std::printf("the write went through\n");
    return 0;
}

tutorial::Result run_access_control(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("VMM is not supported on this device");
    }
    const Found f = walkthrough(ctx.device);
    const std::string before = tutorial::vmm_access_name(f.before_grant);
    const std::string read_only = tutorial::vmm_access_name(f.read_only);
    const std::string read_write = tutorial::vmm_access_name(f.read_write);
    std::printf(
        "One granule, mapped:\n"
        "1. Before any cuMemSetAccess, cuMemGetAccess says %s.\n"
        "2. Filled, then cuMemSetAccess(PROT_READ): cuMemGetAccess says %s; a kernel read all\n"
        "   of it: sum %s.\n"
        "3. cuMemSetAccess(PROT_READWRITE): cuMemGetAccess says %s; a kernel wrote and another\n"
        "   checked: %zu wrong.\n",
        before.c_str(), read_only.c_str(), f.read_only_sum_right ? "correct" : "WRONG",
        read_write.c_str(), f.wrong);

    const std::vector<std::string> device = {std::to_string(ctx.device)};
    std::printf(
        "\nThe mistake of step 1: a kernel reads the range before any grant (in a child):\n");
    const ChildResult none = tutorial::run_child("no_access", device);
    tutorial::print_child_output(none);
    std::printf("   The child %s.\n", none.describe().c_str());
    std::printf("\nThe mistake of step 2: a kernel writes the read-only range (in a child):\n");
    const ChildResult written = tutorial::run_child("read_only", device);
    tutorial::print_child_output(written);
    std::printf("   The child %s.\n", written.describe().c_str());

    std::printf(
        "\nAccess is granted per range and per device. cudaEnablePeerAccess, by contrast, maps\n"
        "every allocation of one GPU into another, past and future; with VMM a program can\n"
        "share exactly the allocations it means to share, and nothing else pays for it.\n\n");
    const bool none_before = before == "PROT_NONE";
    const bool reads_worked = read_only == "PROT_READ" && f.read_only_sum_right;
    const bool read_write_worked = read_write == "PROT_READWRITE" && f.wrong == 0;
    const bool read_ended = ended_early(none, "the kernel finished");
    ctx.claim(tutorial::documented("mapping_grants_nothing",
                                   "a mapping alone grants no access, as cuMemGetAccess shows",
                                   none_before, before + " before any cuMemSetAccess",
                                   "the driver granted access by default", not_by_mapping));
    ctx.claim(tutorial::documented(
        "read_before_grant_ends", "...and a kernel reading it ends the program (in a child)",
        read_ended,
        "the child " + none.describe() +
            (none.failed_with("cudaErrorIllegalAddress") ? ", cudaErrorIllegalAddress" : ""),
        "the kernel read memory it was not granted", not_by_mapping));
    ctx.claim(tutorial::documented("read_only_reads", "PROT_READ lets kernels read the range",
                                   reads_worked,
                                   format("cuMemGetAccess: %s, reads %s", read_only.c_str(),
                                          f.read_only_sum_right ? "correct" : "WRONG"),
                                   "the grant covered less than the range", by_set_access));
    ctx.claim(tutorial::observed(
        "read_only_write_fails", "...and a kernel's write to it fails with cudaErrorIllegalAddress",
        written.failed_with("cudaErrorIllegalAddress"), "the child " + written.describe(),
        "the reference calls PROT_READ read access and names no error for a write"));
    ctx.claim(tutorial::documented(
        "read_write_is_ordinary", "PROT_READWRITE makes the range ordinary device memory",
        read_write_worked,
        format("cuMemGetAccess: %s, %zu values wrong", read_write.c_str(), f.wrong),
        "the grant covered less than the range", by_set_access));
    const int as_documented = none_before + read_ended + reads_worked + read_write_worked;
    return ctx.verdict(as_documented == 4,
                       format("%d of 4: cuMemGetAccess said PROT_NONE before any grant and a "
                              "kernel reading then ended its program, PROT_READ let kernels "
                              "read, PROT_READWRITE read and write",
                              as_documented));
}

TUTORIAL_SECTION(access_control, run_access_control);
TUTORIAL_CHILD(no_access, child_no_access);
TUTORIAL_CHILD(read_only, child_read_only);
