// Checks of section which_memory: every kind of memory against every way of sharing it with
// another process, in one table. The walkthrough of ../which_memory.cu runs in a child process
// (role `share_exporter`), so that its refused calls never touch this one; its importer is this
// program in the role `share_importer` (the lesson's importer()). Three cells are documented, each
// way sharing the memory its reference entries are written for, and the verdict rests on them; a
// fourth, the block of a HostNuma pool exported with its pool, is documented by the same entries
// and judged where the host names a NUMA node. The refusals are this driver's: the entries say
// which memory each call takes, and name no error for other memory.
#include "07_ipc/which_memory.cu"

#include "../helpers/ipc_common.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <sstream>
#include <string>

using tutorial::format;

// Child role `share_importer` (args: device): the lesson's importer.
int child_share_importer(const std::vector<std::string>& args) {
    return importer(std::atoi(args.at(0).c_str()));
}

// Child role `share_exporter` (args: device): the walkthrough, one line per cell for the
// section's own process to read back.
int child_share_exporter(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const Found f = walkthrough(device, {"/proc/self/exe", tutorial::child_flag});
    for (int k = 0; k < kinds; ++k) {
        for (int w = 0; w < ways; ++w) {
            const Cell& c = f.cells[k][w];
            std::printf("cell %d %d %d %zu %u %s %s\n", k, w, c.shared ? 1 : 0, c.wrong,
                        c.first_value, c.shared ? "-" : c.call, c.shared ? "-" : c.error);
        }
    }
    std::printf("before_pool_export %s\nimporter %s\n", cudaGetErrorName(f.before_pool_export),
                child_result(f.status).describe().c_str());
    return child_result(f.status).succeeded() ? 0 : 3;
}

namespace {

// The table as the exporter printed it.
struct Grid {
    Cell cells[kinds][ways] = {};
    std::string before_pool_export = "(no line)";
    std::string importer = "(no line)";
};

Grid parse_grid(const std::string& output) {
    Grid g;
    std::istringstream lines(output);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string tag, call, error;
        words >> tag;
        int k = 0, w = 0, shared = 0;
        if (tag == "cell" && words >> k >> w >> shared && k >= 0 && k < kinds && w >= 0 &&
            w < ways) {
            Cell& c = g.cells[k][w];
            c.shared = shared == 1;
            words >> c.wrong >> c.first_value >> call >> error;
            std::snprintf(c.call, sizeof c.call, "%s", call.c_str());
            std::snprintf(c.error, sizeof c.error, "%s", error.c_str());
        }
        if (tag == "before_pool_export") words >> g.before_pool_export;
        if (tag == "importer") std::getline(words >> std::ws, g.importer);
    }
    return g;
}

// The documented cells: legacy IPC for a cudaMalloc block (by its base pointer), pool export for
// a block of a pool created with a handle type, cuMemExportToShareableHandle for cuMemCreate
// memory created with one. Every other cell is outside some entry's contract (an interior
// pointer, where cudaIpcGetMemHandle asks for the base; memory a call is not written for): what
// it shows is what this driver did.
bool expected(int kind, int way) {
    return (way == legacy && kind == plain) || (way == pool_export && kind == ipc_pool) ||
           (way == vmm_export && kind == vmm_fd);
}

std::string cell_text(const Cell& c, int kind) {
    if (!c.shared && std::string(c.error) == "not-here") return std::string("no ") + c.call;
    if (!c.shared) return c.error;
    if (kind == interior && c.first_value == pattern(0, seed)) return "opens the block's start";
    return format("yes, %zu wrong", c.wrong);
}

// A documented cell as its entries describe it: shared, with every value right.
bool shared_right(const Cell& c) {
    return c.shared && c.wrong == 0;
}

std::string refusal_text(const Cell& c) {
    return c.shared ? "shared" : std::string(c.call) + " -> " + c.error;
}

void print_grid(const Grid& g) {
    tutorial::Table table(
        {{"memory"}, {way_names[legacy]}, {way_names[pool_export]}, {way_names[vmm_export]}});
    for (int k = 0; k < kinds; ++k) {
        std::vector<std::string> row{kind_names[k]};
        for (int w = 0; w < ways; ++w) row.push_back(cell_text(g.cells[k][w], k));
        table.add_row(row);
    }
    table.print();
    std::printf("\nThe refusals, each by the first call that failed:\n");
    for (int k = 0; k < kinds; ++k) {
        for (int w = 0; w < ways; ++w) {
            const Cell& c = g.cells[k][w];
            if (!c.shared)
                std::printf("  %s / %s: %s\n", kind_names[k], way_names[w],
                            refusal_text(c).c_str());
        }
    }
}

// Legacy IPC: documented for the cudaMalloc block; for every other kind, the driver's answer.
void claim_legacy(tutorial::Context& ctx, const Grid& g) {
    std::string legacy_errors;
    bool legacy_refused = true;
    for (int k = default_pool; k < host_numa_pool; ++k) {  // the host rows: claim_host
        const Cell& c = g.cells[k][legacy];
        legacy_refused =
            legacy_refused && !c.shared && std::string(c.error) == "cudaErrorInvalidValue";
        legacy_errors += format("%s%s: %s", k == default_pool ? "" : "; ", kind_names[k],
                                c.shared ? "shared" : c.error);
    }
    const Cell& block = g.cells[plain][legacy];
    ctx.claim(tutorial::documented(
        "legacy_shares_cudamalloc",
        "another process opens a cudaMalloc block's legacy handle and reads every value",
        shared_right(block), "cudaMalloc: " + cell_text(block, plain),
        "the worker could not open the handle, or it mapped other memory",
        tutorial::Entry{"Programming Guide, Interprocess Communication",
                        "cudaIpcGetMemHandle cudaIpcOpenMemHandle", "can"}));
    ctx.claim(tutorial::observed(
        "legacy_refuses_others",
        "cudaIpcGetMemHandle refuses every other kind of memory, each with cudaErrorInvalidValue",
        legacy_refused, legacy_errors,
        "the cudaIpcGetMemHandle entry takes the base of a cudaMalloc allocation and names no "
        "error for other memory"));
}

// Pool export: documented for a pool created with a handle type; the default pool and a block
// exported before its pool are the driver's answers.
void claim_pools(tutorial::Context& ctx, const Grid& g) {
    const Cell& own_pool = g.cells[ipc_pool][pool_export];
    const Cell& default_export = g.cells[default_pool][pool_export];
    ctx.claim(tutorial::documented(
        "pool_block_shared",
        "a block of a pool created with a handle type reaches another process through its pool",
        shared_right(own_pool), "exportable pool: " + cell_text(own_pool, ipc_pool),
        "the pool or the block's export data was refused; the list of refusals says which",
        tutorial::Entry{"Runtime API reference: cudaMemPoolExportToShareableHandle",
                        "cudaMemPoolExportPointer cudaMemPoolImportPointer", "can"}));
    ctx.claim(tutorial::observed(
        "default_pool_refused",
        "the default pool, created with no handle type, is refused by "
        "cudaMemPoolExportToShareableHandle",
        std::string(default_export.call) == "cudaMemPoolExportToShareableHandle" &&
            std::string(default_export.error) == "cudaErrorInvalidValue",
        "default pool: " + refusal_text(default_export),
        "the cudaMemPoolExportToShareableHandle entry is for pools created with a handle type "
        "and names no error for others"));
    ctx.claim(tutorial::observed(
        "block_refused_before_pool",
        "a pool's block is refused by cudaMemPoolExportPointer until the pool itself is exported",
        g.before_pool_export == "cudaErrorInvalidValue",
        "cudaMemPoolExportPointer first: " + g.before_pool_export +
            "; after cudaMemPoolExportToShareableHandle: " + cell_text(own_pool, ipc_pool),
        "the cudaMemPoolExportPointer entry is for blocks of a pool already shared and names no "
        "error for others"));
}

// VMM: documented for memory created with a handle type; without one, the driver's answer.
void claim_vmm(tutorial::Context& ctx, const Grid& g) {
    const Cell& with_type = g.cells[vmm_fd][vmm_export];
    const Cell& without = g.cells[vmm_none][vmm_export];
    ctx.claim(tutorial::documented(
        "vmm_shared",
        "cuMemCreate memory created with the POSIX fd handle type reaches another process as a "
        "descriptor",
        shared_right(with_type), "with the POSIX fd type: " + cell_text(with_type, vmm_fd),
        "the export or the import was refused; the list of refusals says which",
        tutorial::Entry{"Driver API reference: cuMemExportToShareableHandle",
                        "cuMemImportFromShareableHandle cuMemMap", "can"}));
    ctx.claim(tutorial::observed(
        "untyped_vmm_refused",
        "cuMemCreate memory created without a handle type is refused by "
        "cuMemExportToShareableHandle",
        std::string(without.call) == "cuMemExportToShareableHandle" &&
            std::string(without.error) == "CUDA_ERROR_INVALID_VALUE",
        "without: " + refusal_text(without),
        "the cuMemExportToShareableHandle entry names no error for memory created without the "
        "handle type asked for"));
}

// The three rows of host memory (section host_shared): the HostNuma pool's block through its
// pool, documented as for a pool of device memory; the memfd's and cudaHostAlloc's memory, which
// none of the three ways is written for.
void claim_host(tutorial::Context& ctx, const Grid& g) {
    const Cell& numa_block = g.cells[host_numa_pool][pool_export];
    const bool numa_made = numa_block.shared || std::string(numa_block.error) != "not-here";
    ctx.claim(tutorial::documented(
                  "host_numa_block_shared",
                  "a block of a HostNuma pool created with a handle type reaches another process "
                  "through its pool",
                  shared_right(numa_block),
                  "HostNuma pool: " + cell_text(numa_block, host_numa_pool),
                  "the pool or the block's export data was refused, or the importer's GPU was "
                  "not granted access; the list of refusals says which",
                  tutorial::Entry{"Runtime API reference: cudaMemPoolExportToShareableHandle",
                                  "cudaMemPoolExportPointer cudaMemPoolImportPointer", "can"}),
              numa_made ? "" : std::string("this machine lacks ") + numa_block.call);
    bool all_refused = true;
    std::string answers;
    for (const int k : {memfd_registered, host_alloc}) {
        for (int w = 0; w < ways; ++w) {
            const Cell& c = g.cells[k][w];
            all_refused = all_refused && !c.shared;
            answers += format("%s%s / %s: %s", answers.empty() ? "" : "; ", kind_names[k],
                              way_names[w], c.shared ? "shared" : c.error);
        }
    }
    ctx.claim(tutorial::observed(
        "host_memory_refused",
        "every way refuses memfd memory registered with cudaHostRegister and cudaHostAlloc memory",
        all_refused, answers,
        "the three ways' entries are written for cudaMalloc memory, pools created with a handle "
        "type and cuMemCreate allocations, and name no error for other host memory"));
}

// Why one of the three ways cannot work on this device ("" when all can): legacy IPC
// (ipcEventSupported, which the cudaIpcGetMemHandle entry names as its test), pools exported as
// descriptors, cuMemCreate memory exported as a descriptor.
std::string why_not_every_way(int device) {
    if (const std::string why = why_no_legacy_ipc(device); !why.empty()) return why;
    const int pool_types =
        tutorial::device_attribute(device, cudaDevAttrMemoryPoolsSupported) == 1
            ? tutorial::device_attribute(device, cudaDevAttrMemoryPoolSupportedHandleTypes)
            : 0;
    if ((pool_types & cudaMemHandleTypePosixFileDescriptor) == 0) {
        return "this device's pools cannot be exported as file descriptors";
    }
    if (!tutorial::vmm_supported(device) ||
        tutorial::driver_attribute(
            device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1) {
        return "VMM allocations cannot be exported as file descriptors on this device";
    }
    return "";
}

}  // namespace

tutorial::Result run_which_memory(tutorial::Context& ctx) {
    // The table needs all three ways on this device.
    if (const std::string why = why_not_every_way(ctx.device); !why.empty()) return ctx.skip(why);
    std::printf(
        "Eleven kinds of memory, 2 MiB each, filled with a known pattern; three ways to share\n"
        "each. Where the export works, a worker process imports the memory and checks the\n"
        "pattern; otherwise the cell shows the refusing call's error (listed below the "
        "table). The last three rows are pinned host memory, which section host_shared\n"
        "shares with a worker in place.\n\n");
    const tutorial::ChildResult exporter =
        tutorial::run_child("share_exporter", {std::to_string(ctx.device)}, "", 90.0);
    const Grid g = parse_grid(exporter.output);
    if (!exporter.succeeded()) tutorial::print_child_output(exporter);
    print_grid(g);
    std::printf(
        "\nThe exporting side ran in a child process, so that its refused calls never touch this\n"
        "one; it %s, and its importing worker %s.\n"
        "cudaMemPoolExportPointer on the exportable pool's block before the pool itself was\n"
        "exported -> %s\n\n",
        exporter.describe().c_str(), g.importer.c_str(), g.before_pool_export.c_str());
    claim_legacy(ctx, g);
    claim_pools(ctx, g);
    claim_vmm(ctx, g);
    claim_host(ctx, g);
    int right = 0, refusals = 0;
    for (int k = 0; k < kinds; ++k) {
        for (int w = 0; w < ways; ++w) {
            right += expected(k, w) && shared_right(g.cells[k][w]);
            refusals += g.cells[k][w].shared ? 0 : 1;
        }
    }
    return ctx.verdict(right == ways && exporter.succeeded(),
                       format("%d of %d ways shared the memory each is documented for, every "
                              "value right (the %d refusals are this driver's answers)",
                              right, static_cast<int>(ways), refusals));
}

TUTORIAL_SECTION(which_memory, run_which_memory);
TUTORIAL_CHILD(share_exporter, child_share_exporter);
TUTORIAL_CHILD(share_importer, child_share_importer);
