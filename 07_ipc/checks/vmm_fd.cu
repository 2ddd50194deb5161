// Checks of section vmm_fd: runs the walkthrough of ../vmm_fd.cu, whose importer is this program
// in the child role `fd_importer` (the lesson's fd_importer()): the exporter's descriptor crosses
// a Unix socket, the importer maps the same memory and changes it in place, and the exporter sees
// the change in its own mapping.
#include "07_ipc/vmm_fd.cu"

#include "../helpers/ipc_common.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>

// Child role `fd_importer` (args: device): the lesson's importer.
int child_fd_importer(const std::vector<std::string>& args) {
    return fd_importer(std::atoi(args.at(0).c_str()));
}

tutorial::Result run_vmm_fd(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device) ||
        tutorial::driver_attribute(
            ctx.device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1) {
        return ctx.skip("VMM allocations cannot be exported as file descriptors on this device");
    }
    const std::size_t bytes =
        tutorial::round_up(ctx.quick() ? (4 << 20) : (64 << 20),
                           tutorial::vmm_granularity(tutorial::vmm_properties(ctx.device)));
    const std::size_t count = bytes / 4;
    std::printf(
        "The master creates %s with requestedHandleTypes = POSIX_FILE_DESCRIPTOR, maps and fills\n"
        "it, and exports it as a file descriptor, which goes to the worker over their Unix\n"
        "socket (SCM_RIGHTS): the worker gets a descriptor of its own for the same memory, maps\n"
        "it, checks it and replaces every value by 2 * x + 1.\n\n",
        tutorial::format_bytes(bytes).c_str());
    const Found found = walkthrough(bytes, ctx.device, {"/proc/self/exe", tutorial::child_flag});
    const tutorial::ChildResult worker = child_result(found.status);
    std::printf(
        "The master exported descriptor %d. The worker %s; it found %s.\n", found.fd,
        worker.describe().c_str(),
        found.answered
            ? tutorial::format("%zu of %zu values wrong", found.importer_wrong, count).c_str()
            : "(no answer)");
    std::printf("Back in the master: %zu of %zu values are not 2 * x + 1.\n\n", found.wrong, count);
    // The recipient converts the descriptor back into a handle to the same allocation and maps it.
    const tutorial::Entry fd_entry{"Driver API reference: cuMemExportToShareableHandle",
                                   "cuMemImportFromShareableHandle cuMemMap", "can"};
    ctx.claim(tutorial::documented(
        "descriptor_gives_same_memory",
        "a file descriptor passed over a Unix socket gives another process the same memory",
        found.answered && found.importer_wrong == 0,
        found.answered ? tutorial::format("the worker read %zu of %zu values wrong",
                                          found.importer_wrong, count)
                       : "the worker " + worker.describe(),
        "the descriptor did not arrive, or the import was refused", fd_entry));
    ctx.claim(tutorial::documented(
        "change_shows_in_master", "the worker's in-place change shows in the master's own mapping",
        found.wrong == 0, tutorial::format("%zu of %zu values not 2 * x + 1", found.wrong, count),
        "the worker mapped a copy, or did not finish before unmapping", fd_entry));
    return ctx.verdict(
        found.answered && worker.succeeded() && found.importer_wrong == 0 && found.wrong == 0,
        "the worker imported the descriptor, read the master's data and changed "
        "it in place, and the master saw the change");
}

TUTORIAL_SECTION(vmm_fd, run_vmm_fd);
TUTORIAL_CHILD(fd_importer, child_fd_importer);
