// Checks of section vmm_fd: the master creates, maps and fills an exportable allocation with
// ../vmm_fd.cu and passes its descriptor over a Unix socket pair (helpers/channel.cpp); a worker
// process imports and maps it, checks it and changes it in place; the master checks the change.
#include "07_ipc/vmm_fd.cu"

#include "../helpers/channel.hpp"
#include "../helpers/ipc_common.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"

#include <cstdio>
#include <cstdlib>

using tutorial::vmm_free;
using tutorial::vmm_release;
using tutorial::vmm_unmap;

namespace {

constexpr std::uint32_t fd_seed = 61;
// Where sharing cuMemCreate memory as a descriptor is documented: exported, imported back into a
// handle to the allocation, and mapped by the importer.
const tutorial::Entry fd_entry{"Driver API reference: cuMemExportToShareableHandle",
                               "cuMemImportFromShareableHandle cuMemMap", "can"};

}  // namespace

// Child role: receive the descriptor on the channel, import, map, check, transform in place.
int child_fd_importer(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    std::string line;
    if (tutorial::read_input_line(line, task_timeout_s) != tutorial::Input::received) return 4;
    const std::size_t bytes = std::strtoull(line.c_str(), nullptr, 10);
    const int fd = receive_descriptor(tutorial::child_passed_fd, 10.0);
    if (fd < 0) {
        std::printf("no descriptor arrived\n");
        return 4;
    }
    const CUdeviceptr address = import_and_map(fd, bytes, device);
    auto* data = reinterpret_cast<std::uint32_t*>(address);
    const std::size_t count = bytes / 4;
    const std::size_t wrong = mismatches_on_device(data, count, fd_seed);
    transform(data, data, count, nullptr);  // in place: the master will see this
    CUDA_CHECK(cudaDeviceSynchronize());
    std::printf(
        "descriptor %d imported and mapped at 0x%llx; %zu of %zu values wrong; all "
        "replaced by 2 * x + 1\n",
        fd, static_cast<unsigned long long>(address), wrong, count);
    vmm_unmap(address, bytes);
    vmm_free(address, bytes);
    return wrong == 0 ? 0 : 3;
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
    const CUmemGenericAllocationHandle memory = create_exportable(ctx.device, bytes);
    const CUdeviceptr address = map_here(memory, bytes, ctx.device);
    auto* data = reinterpret_cast<std::uint32_t*>(address);
    fill_on_device(data, count, fd_seed);

    const int fd = export_fd(memory);
    std::printf(
        "The master created %s with requestedHandleTypes = POSIX_FILE_DESCRIPTOR, mapped it at\n"
        "0x%llx, filled it, and exported it as file descriptor %d. The descriptor goes to the\n"
        "worker over a Unix socket pair (SCM_RIGHTS); the worker gets its own descriptor for "
        "it.\n\n",
        tutorial::format_bytes(bytes).c_str(), static_cast<unsigned long long>(address), fd);
    Channel channel;
    tutorial::ChildProcess worker("fd_importer", {std::to_string(ctx.device)},
                                  channel.worker_end());
    channel.close_worker_end();
    worker.send(std::to_string(bytes) + "\n");
    const bool sent = send_descriptor(channel.master_end(), fd);
    close(fd);
    const tutorial::ChildResult result = worker.wait(60.0);
    tutorial::print_child_output(result);
    std::printf("The worker %s.\n", result.describe().c_str());

    const std::size_t wrong = mismatches_on_device(data, count, fd_seed, {2, 1});
    std::printf("Back in the master: %zu of %zu values are not 2 * x + 1.\n", wrong, count);
    vmm_unmap(address, bytes);
    vmm_release(memory);
    vmm_free(address, bytes);
    std::printf("\n");
    ctx.claim(tutorial::documented(
        "descriptor_gives_same_memory", "a file descriptor passed over a Unix socket gives another process the same memory",
        sent && result.succeeded(), "the worker " + result.describe(),
        "the descriptor did not arrive, or the import was refused; the worker's lines say which",
        fd_entry));
    ctx.claim(tutorial::documented(
        "change_shows_in_master", "the worker's in-place change shows in the master's own mapping", wrong == 0,
        tutorial::format("%zu of %zu values not 2 * x + 1", wrong, count),
        "the worker mapped a copy, or did not finish before unmapping", fd_entry));
    return ctx.verdict(sent && result.succeeded() && wrong == 0,
                       "the worker imported the descriptor, read the master's data and changed "
                       "it in place, and the master saw the change");
}

TUTORIAL_SECTION(vmm_fd, run_vmm_fd);
TUTORIAL_CHILD(fd_importer, child_fd_importer);
