// Checks of section cross_gpu: runs the walkthrough of ../cross_gpu.cu, whose workers are this
// program in the child role `cross_gpu_worker` (the lesson's cross_gpu_worker()), one on each GPU
// other than the master's; sets each way in against the same GPUs in one process, and measures
// the ratios again with fresh workers when they fall short.
#include "07_ipc/cross_gpu.cu"

#include "../helpers/ipc_common.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"

#include <algorithm>
#include <cstdio>

using tutorial::format;

// Child role `cross_gpu_worker` (args: its GPU): the lesson's worker.
int child_cross_gpu_worker(const std::vector<std::string>& args) {
    return cross_gpu_worker(std::atoi(args.at(0).c_str()));
}

namespace {

// Whether worker i opened the legacy handle (observed: where the driver refused, that way in has
// no rates, and the ratios below leave it out).
bool legacy_opened(const Found& f, std::size_t i) {
    return f.answered[i] && f.answers[i].ipc_opened == cudaSuccess;
}

// The slowest worker's rate against one process's, over every worker GPU and each way in that
// opened (the descriptor's always counts: a worker that did not answer counts as 0).
double slowest(const Found& f, double Use::*rate) {
    double worst = 1e300;
    for (std::size_t i = 0; i < f.gpus.size(); ++i) {
        const double base = f.in_process[i].*rate;
        worst = std::min(worst, f.answers[i].vmm.*rate / base);
        if (legacy_opened(f, i)) worst = std::min(worst, f.answers[i].ipc.*rate / base);
    }
    return worst;
}

double slowest_copy(const Found& f) {
    return slowest(f, &Use::copy_gbps);
}

double slowest_read(const Found& f) {
    return slowest(f, &Use::read_gbps);
}

void print_found(const Found& f, int master) {
    tutorial::Table table({{"worker GPU"},
                           {"way in"},
                           {"pointer's device", tutorial::Align::right},
                           {"kernel read GB/s", tutorial::Align::right},
                           {"copy GB/s", tutorial::Align::right},
                           {"of in-process copy", tutorial::Align::right}});
    for (std::size_t i = 0; i < f.gpus.size(); ++i) {
        const Use& one = f.in_process[i];
        const Answer& a = f.answers[i];
        table.add_row({format("GPU %d", f.gpus[i]), "in-process peer access", format("%d", master),
                       format("%.1f", one.read_gbps), format("%.1f", one.copy_gbps), "100%"});
        const auto row = [&](const char* way, const Use& u) {
            table.add_row({"", way, format("%d", u.device_named), format("%.1f", u.read_gbps),
                           format("%.1f", u.copy_gbps),
                           format("%.0f%%", 100 * u.copy_gbps / one.copy_gbps)});
        };
        if (legacy_opened(f, i) || !f.answered[i]) {
            row("cudaIpcOpenMemHandle", a.ipc);
        } else {
            table.add_row({"", "cudaIpcOpenMemHandle", cudaGetErrorName(a.ipc_opened), "", "", ""});
        }
        row("POSIX fd + cuMemSetAccess", a.vmm);
        if (!f.answered[i]) {
            std::printf("the worker on GPU %d did not answer: it %s\n", f.gpus[i],
                        child_result(f.statuses[i]).describe().c_str());
        }
    }
    table.print();
}

std::string why_not_here(int device, int gpus) {
    if (gpus < 2) return format("needs 2 GPUs; this machine has %d", gpus);
    // Without peer access, enabling it (or a peer read) would stop the run: say why instead.
    const std::string no_peer = tutorial::why_no_peer_access(gpus);
    if (!no_peer.empty()) return no_peer;
    if (const std::string why = why_no_legacy_ipc(device); !why.empty()) return why;
    if (!tutorial::vmm_supported(device) ||
        tutorial::driver_attribute(
            device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1) {
        return "VMM allocations cannot be exported as file descriptors on this device";
    }
    return "";
}

}  // namespace

tutorial::Result run_cross_gpu(tutorial::Context& ctx) {
    const int gpus = tutorial::device_count();
    if (const std::string why = why_not_here(ctx.device, gpus); !why.empty()) return ctx.skip(why);
    const std::size_t bytes = ctx.quick() ? (64 << 20) : (256 << 20);
    std::printf(
        "The master, on GPU %d, has %s from cudaMalloc (shared by cudaIpcGetMemHandle) and as\n"
        "much from cuMemCreate (shared as a file descriptor). A worker process on each other\n"
        "GPU opens both, checks them with a kernel, and times a kernel's read and a copy into\n"
        "its own memory (medians of %d). In its own process the master times the same GPUs\n"
        "with cudaDeviceEnablePeerAccess.\n\n",
        ctx.device, tutorial::format_bytes(bytes).c_str(), runs);
    const std::vector<std::string> self = {"/proc/self/exe", tutorial::child_flag};
    const Found f = walkthrough(bytes, ctx.device, self);
    print_found(f, ctx.device);
    int legacy_right = 0, vmm_right = 0, clean = 0;
    std::string legacy_refused;  // what cudaIpcOpenMemHandle returned where it was refused
    for (std::size_t i = 0; i < f.gpus.size(); ++i) {
        legacy_right += legacy_opened(f, i) && f.answers[i].ipc.wrong == 0;
        if (f.answered[i] && !legacy_opened(f, i))
            legacy_refused +=
                format("; GPU %d: %s", f.gpus[i], cudaGetErrorName(f.answers[i].ipc_opened));
        vmm_right += f.answered[i] && f.answers[i].vmm.wrong == 0;
        clean += child_result(f.statuses[i]).succeeded();
    }
    std::printf(
        "\nA worker on another GPU reads the master's memory where it is, over the link between\n"
        "the GPUs, at the speed one process gets between the same GPUs. Asked in the worker,\n"
        "cudaPointerGetAttributes should name the GPU where the memory is (its entry says so for\n"
        "device memory); see the column for what this driver said for each way in. To know where\n"
        "the bytes are, send the owning GPU along with the handle.\n\n");
    const int workers = gpus - 1;
    // The cudaIpcOpenMemHandle entry's "Maps memory exported ... into the current device address
    // space" is said of the call in general; for contexts on different devices it says only that
    // the call "can attempt" to enable peer access, so what this driver did there is observed.
    // Imported cuMemCreate memory is mapped there like any, as its entries promise.
    ctx.claim(tutorial::observed(
        "legacy_opens_on_other_gpu",
        "workers on other GPUs open the master's cudaMalloc memory by its legacy handle and read "
        "it in place",
        legacy_right == workers,
        format("%d of %d workers read it right%s", legacy_right, workers, legacy_refused.c_str()),
        "the cudaIpcOpenMemHandle entry's \"Maps memory exported from another process\" is "
        "general; for contexts on different devices it says only that the call \"can attempt\" "
        "to enable peer access, and promises no success"));
    ctx.claim(tutorial::documented(
        "descriptor_maps_on_other_gpu",
        "...and its cuMemCreate memory by a file descriptor, mapped and granted to their own GPU",
        vmm_right == workers, format("%d of %d workers read it right", vmm_right, workers),
        "a worker could not import or map the memory; its error is above",
        tutorial::Entry{"Driver API reference: cuMemExportToShareableHandle",
                        "cuMemImportFromShareableHandle cuMemMap", "can"}));
    const auto again = [&](double (*ratio)(const Found&)) {
        return ratio(walkthrough(bytes, ctx.device, self));
    };
    ctx.claim(tutorial::at_least("copies_as_in_process",
                                 "copies from the shared memory run as fast across processes as in "
                                 "one (slowest worker / in-process)",
                                 slowest_copy(f), 0.8, "x",
                                 "the workers reached the memory over another path than one "
                                 "process's peer access does")
                  .again([&] { return again(slowest_copy); }));
    ctx.claim(tutorial::at_least("reads_as_in_process",
                                 "...and so do kernels reading it in place (slowest worker / "
                                 "in-process)",
                                 slowest_read(f), 0.8, "x",
                                 "the workers reached the memory over another path than one "
                                 "process's peer access does")
                  .again([&] { return again(slowest_read); }));
    CUDA_CHECK(cudaSetDevice(ctx.device));
    // The verdict rests on the descriptor's way in (documented) and the workers' ends; the legacy
    // handle's open on another GPU is observed above, and so never decides it.
    return ctx.verdict(vmm_right == workers && clean == workers,
                       format("%d of %d workers on other GPUs read the master's cuMemCreate memory "
                              "right (%d its cudaMalloc memory, by the legacy handle)",
                              vmm_right, workers, legacy_right));
}

TUTORIAL_SECTION(cross_gpu, run_cross_gpu);
TUTORIAL_CHILD(cross_gpu_worker, child_cross_gpu_worker);
