// Checks of section cross_gpu: a worker process on each GPU other than the master's opens both of
// ../cross_gpu.cu's ways in, checks the data with a kernel and times a kernel's read and a copy
// into its own memory; the master times the same GPUs in one process with peer access.
#include "07_ipc/cross_gpu.cu"

#include "../helpers/channel.hpp"
#include "../helpers/ipc_common.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::format;

namespace {

constexpr std::uint32_t ipc_seed = 81;
constexpr std::uint32_t vmm_seed = 82;
constexpr int runs = 5;

// GB/s of cudaMemcpyAsync from `from` (anywhere) into a buffer of the current GPU.
double copy_gbps(const std::uint32_t* from, std::size_t count) {
    std::uint32_t* local = nullptr;
    CUDA_CHECK(cudaMalloc(&local, count * sizeof *local));
    const double ms = tutorial::median_event_ms(1, runs, [&] {
        CUDA_CHECK(cudaMemcpyAsync(local, from, count * sizeof *local, cudaMemcpyDefault, nullptr));
    });
    CUDA_CHECK(cudaFree(local));
    return tutorial::gb_per_s(count * sizeof *from, ms);
}

// The line a worker prints for each way in, which the master reads back.
void report_use(const char* way, const std::uint32_t* data, std::size_t count, std::uint32_t seed) {
    const std::size_t wrong = mismatches_on_device(data, count, seed);
    const double read = read_gbps(data, count, runs);
    const double copy = copy_gbps(data, count);
    std::printf("%s: at %p, on device %d; kernel read %.1f GB/s, copy %.1f GB/s, %zu wrong\n", way,
                static_cast<const void*>(data), device_of(data), read, copy, wrong);
}

// The worker's side of the legacy IPC handle.
void use_ipc_handle(const cudaIpcMemHandle_t& handle, std::size_t count) {
    void* data = open_from_other_gpu(handle);
    report_use("ipc", static_cast<const std::uint32_t*>(data), count, ipc_seed);
    close_from_other_gpu(data);
}

// The worker's side of the file descriptor.
void use_vmm_descriptor(int fd, std::size_t bytes, int device) {
    const CUdeviceptr address = import_for_this_gpu(fd, bytes, device);
    report_use("vmm", reinterpret_cast<const std::uint32_t*>(address), bytes / 4, vmm_seed);
    tutorial::vmm_unmap(address, bytes);
    tutorial::vmm_free(address, bytes);
}

// The master's two buffers, filled: pattern(., ipc_seed) and pattern(., vmm_seed).
Shared make_filled(std::size_t wanted) {
    Shared s = make_shared(wanted);
    fill_on_device(s.ipc_buffer, s.bytes / 4, ipc_seed);
    fill_on_device(reinterpret_cast<std::uint32_t*>(s.vmm_address), s.bytes / 4, vmm_seed);
    return s;
}

void free_shared(Shared& s) {
    close(s.fd);
    CUDA_CHECK(cudaSetDevice(master_gpu));
    tutorial::vmm_unmap(s.vmm_address, s.bytes);
    tutorial::vmm_release(s.vmm_memory);
    tutorial::vmm_free(s.vmm_address, s.bytes);
    CUDA_CHECK(cudaFree(s.ipc_buffer));
}

struct WorkerUse {
    int gpu = 0;
    tutorial::ChildResult child;
    double ipc_read = 0, ipc_copy = 0, vmm_read = 0, vmm_copy = 0;
    std::size_t wrong = 0, wrong_ipc = 1, wrong_vmm = 1;
    int device_named[2] = {-1, -1};  // what cudaPointerGetAttributes said in the worker
    bool reported = false;
};

WorkerUse run_worker(const Shared& s, int gpu) {
    WorkerUse w;
    w.gpu = gpu;
    Channel channel;
    tutorial::ChildProcess worker("cross_gpu_worker", {std::to_string(gpu)}, channel.worker_end());
    channel.close_worker_end();
    worker.send(handle_line(s.handle, s.bytes));
    send_descriptor(channel.master_end(), s.fd);
    w.child = worker.wait(60.0);
    const std::string& out = w.child.output;
    const std::size_t ipc = out.find("ipc: ");
    const std::size_t vmm = out.find("vmm: ");
    std::size_t& wrong_ipc = w.wrong_ipc;
    std::size_t& wrong_vmm = w.wrong_vmm;
    w.reported = ipc != std::string::npos && vmm != std::string::npos &&
                 std::sscanf(out.c_str() + ipc,
                             "ipc: at %*s on device %d; kernel read %lf GB/s, "
                             "copy %lf GB/s, %zu wrong",
                             &w.device_named[0], &w.ipc_read, &w.ipc_copy, &wrong_ipc) == 4 &&
                 std::sscanf(out.c_str() + vmm,
                             "vmm: at %*s on device %d; kernel read %lf GB/s, "
                             "copy %lf GB/s, %zu wrong",
                             &w.device_named[1], &w.vmm_read, &w.vmm_copy, &wrong_vmm) == 4;
    w.wrong = wrong_ipc + wrong_vmm;
    return w;
}

// The same GPUs inside one process: peer access on, a peer copy and a kernel's peer read.
void in_process_rates(const Shared& s, int gpu, double& copy, double& read) {
    enable_peer_access_from(gpu);
    copy = copy_gbps(s.ipc_buffer, s.bytes / 4);
    read = read_gbps(s.ipc_buffer, s.bytes / 4, runs);
    disable_peer_access_from(gpu);
}

}  // namespace

// Child role: a worker on GPU args[0]. Reads "<IPC handle in hex> <bytes>" on stdin and a file
// descriptor on the channel; uses both and prints one line for each.
int child_cross_gpu_worker(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    std::size_t bytes = 0;
    cudaIpcMemHandle_t handle{};
    if (!read_handle_line(handle, bytes)) return 4;
    const int fd = receive_descriptor(tutorial::child_passed_fd, 10.0);
    if (fd < 0) {
        std::printf("no descriptor arrived\n");
        return 4;
    }
    std::printf("worker on GPU %d\n", device);
    use_ipc_handle(handle, bytes / 4);
    use_vmm_descriptor(fd, bytes, device);
    return 0;
}

tutorial::Result run_cross_gpu(tutorial::Context& ctx) {
    if (const std::string why = why_no_legacy_ipc(ctx.device); !why.empty()) return ctx.skip(why);
    const int gpus = tutorial::device_count();
    if (gpus < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", gpus));
    // Without peer access, enabling it (or a peer read) would stop the run: say why instead.
    const std::string no_peer = tutorial::why_no_peer_access(gpus);
    if (!no_peer.empty()) return ctx.skip(no_peer);
    if (!tutorial::vmm_supported(master_gpu) ||
        tutorial::driver_attribute(
            master_gpu, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1) {
        return ctx.skip("VMM allocations cannot be exported as file descriptors on this device");
    }
    Shared s = make_filled(ctx.quick() ? (64 << 20) : (256 << 20));
    std::printf(
        "The master, on GPU %d, has %s from cudaMalloc (shared by cudaIpcGetMemHandle) and %s\n"
        "from cuMemCreate (shared as a file descriptor). A worker process on each other GPU\n"
        "opens both, checks them with a kernel, and times a kernel's read and a copy into its\n"
        "own memory (medians of %d). In its own process the master times the same GPUs with\n"
        "cudaDeviceEnablePeerAccess.\n\n",
        master_gpu, tutorial::format_bytes(s.bytes).c_str(),
        tutorial::format_bytes(s.bytes).c_str(), runs);
    tutorial::Table table({{"worker GPU"},
                           {"way in"},
                           {"pointer's device", tutorial::Align::right},
                           {"kernel read GB/s", tutorial::Align::right},
                           {"copy GB/s", tutorial::Align::right},
                           {"of in-process copy", tutorial::Align::right}});
    int right = 0, legacy_right = 0, vmm_right = 0;
    double worst_copy = 1e300, worst_read = 1e300;
    for (int g = 0; g < gpus; ++g) {
        if (g == master_gpu) continue;
        double copy = 0, read = 0;
        in_process_rates(s, g, copy, read);
        const WorkerUse w = run_worker(s, g);
        if (!w.reported || !w.child.succeeded()) tutorial::print_child_output(w.child);
        right += w.reported && w.child.succeeded() && w.wrong == 0;
        legacy_right += w.reported && w.wrong_ipc == 0;
        vmm_right += w.reported && w.child.succeeded() && w.wrong_vmm == 0;
        worst_copy = std::min({worst_copy, w.ipc_copy / copy, w.vmm_copy / copy});
        worst_read = std::min({worst_read, w.ipc_read / read, w.vmm_read / read});
        table.add_row({format("GPU %d", g), "in-process peer access", format("%d", master_gpu),
                       format("%.1f", read), format("%.1f", copy), "100%"});
        table.add_row({"", "cudaIpcOpenMemHandle", format("%d", w.device_named[0]),
                       format("%.1f", w.ipc_read), format("%.1f", w.ipc_copy),
                       format("%.0f%%", 100 * w.ipc_copy / copy)});
        table.add_row({"", "POSIX fd + cuMemSetAccess", format("%d", w.device_named[1]),
                       format("%.1f", w.vmm_read), format("%.1f", w.vmm_copy),
                       format("%.0f%%", 100 * w.vmm_copy / copy)});
    }
    table.print();
    // Fresh rounds for a claim measured again: every worker GPU, in one process and from workers.
    const auto again = [&](bool copies) {
        double worst = 1e300;
        for (int g = 0; g < gpus; ++g) {
            if (g == master_gpu) continue;
            double copy = 0, read = 0;
            in_process_rates(s, g, copy, read);
            const WorkerUse w = run_worker(s, g);
            worst = copies ? std::min({worst, w.ipc_copy / copy, w.vmm_copy / copy})
                           : std::min({worst, w.ipc_read / read, w.vmm_read / read});
        }
        return worst;
    };
    std::printf(
        "\nA worker on another GPU reads the master's memory where it is, over the link between\n"
        "the GPUs, at the speed one process gets between the same GPUs. Asked in the worker,\n"
        "cudaPointerGetAttributes should name the GPU where the memory is (its entry says so for\n"
        "device memory); see the column for what this driver said for each way in. To know where\n"
        "the bytes are, send the owning GPU along with the handle.\n\n");
    const int workers = gpus - 1;
    // A legacy handle opens on another GPU as if the worker had enabled peer access
    // (cudaIpcMemLazyEnablePeerAccess); imported cuMemCreate memory is mapped there like any.
    ctx.claim(tutorial::documented(
        "legacy_opens_on_other_gpu",
        "workers on other GPUs open the master's cudaMalloc memory by its legacy handle and read "
        "it in place",
        legacy_right == workers, format("%d of %d workers read it right", legacy_right, workers),
        "a worker could not open the handle; its output above says why",
        tutorial::Entry{"Runtime API reference: cudaIpcOpenMemHandle",
                        "cudaIpcMemLazyEnablePeerAccess cudaDeviceEnablePeerAccess", "can"}));
    ctx.claim(tutorial::documented(
        "descriptor_maps_on_other_gpu",
        "...and its cuMemCreate memory by a file descriptor, mapped and granted to their own GPU",
        vmm_right == workers, format("%d of %d workers read it right", vmm_right, workers),
        "a worker could not import or map the memory; its output above says why",
        tutorial::Entry{"Driver API reference: cuMemExportToShareableHandle",
                        "cuMemImportFromShareableHandle cuMemMap", "can"}));
    ctx.claim(tutorial::at_least("copies_as_in_process",
                                 "across processes, copies from the shared memory run as fast as "
                                 "within one process (slowest worker / in-process)",
                                 worst_copy, 0.8, "x",
                                 "the workers reached the memory over another path than one "
                                 "process's peer access does")
                  .again([&] { return again(true); }));
    ctx.claim(tutorial::at_least("reads_as_in_process",
                                 "...and so do kernels reading it in place (slowest worker / "
                                 "in-process)",
                                 worst_read, 0.8, "x",
                                 "the workers reached the memory over another path than one "
                                 "process's peer access does")
                  .again([&] { return again(false); }));
    free_shared(s);
    CUDA_CHECK(cudaSetDevice(ctx.device));
    return ctx.verdict(right == workers, format("%d of %d workers on other GPUs read the "
                                                "master's two buffers right",
                                                right, workers));
}

TUTORIAL_SECTION(cross_gpu, run_cross_gpu);
TUTORIAL_CHILD(cross_gpu_worker, child_cross_gpu_worker);
