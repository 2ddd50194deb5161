// Checks of section host_shared: pinned host memory reached by a second process three ways. The
// walkthrough of ../host_shared.cu runs in a child process (role `host_exporter`), so that its
// refused calls (cudaIpcGetMemHandle of host memory, a shareable pool at cudaMemLocationTypeHost)
// never touch this one; its workers are this program in the role `host_worker` (the lesson's
// host_worker()). The verdict rests on what the entries promise: the HostNuma pool's block and
// the shared file's pages reach the worker's GPU and its write reaches the parent; the copy stays
// a copy. What the legacy call says of cudaHostAlloc memory, and whether the worker's CPU reaches
// an imported pool's block, are this driver's answers.
#include "07_ipc/host_shared.cu"

#include "../helpers/ipc_common.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

using tutorial::format;

// Child role `host_worker` (args: device): the lesson's worker.
int child_host_worker(const std::vector<std::string>& args) {
    return host_worker(std::atoi(args.at(0).c_str()));
}

// Child role `host_exporter` (args: device, bytes): the walkthrough, its findings one per line
// for the section's own process to read back.
int child_host_exporter(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    const std::size_t bytes = std::strtoull(args.at(1).c_str(), nullptr, 10);
    CUDA_CHECK(cudaSetDevice(device));
    const Found f = walkthrough(bytes, device, {"/proc/self/exe", tutorial::child_flag});
    std::printf("legacy_handle %s\nhost_pool %s\nnuma_id %d\n", cudaGetErrorName(f.legacy_handle),
                cudaGetErrorName(f.host_pool), f.numa_id);
    for (int w = 0; w < ways; ++w) {
        const Shared& s = f.way[w];
        std::printf("way %d %d %d %zu %.4f %.4f %d %zu %zu %zu %d\n", w, s.gpu_answered ? 1 : 0,
                    s.cpu_answered ? 1 : 0, s.gpu.kernel_wrong, s.gpu.copy_gbps,
                    s.gpu.socket_gbps, static_cast<int>(s.gpu.before), s.cpu.cpu_wrong,
                    s.parent_not_written, s.parent_not_original, s.status);
    }
    return 0;
}

namespace {

// What the exporter printed, and how it ended.
struct Run {
    std::string legacy_handle = "(no line)";
    std::string host_pool = "(no line)";
    int numa_id = -1;
    bool seen[ways] = {};
    Shared way[ways] = {};
    tutorial::ChildResult exporter;
};

Run parse_run(const tutorial::ChildResult& exporter) {
    Run run;
    run.exporter = exporter;
    std::istringstream lines(exporter.output);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string tag;
        words >> tag;
        if (tag == "legacy_handle") words >> run.legacy_handle;
        if (tag == "host_pool") words >> run.host_pool;
        if (tag == "numa_id") words >> run.numa_id;
        int w = -1, gpu = 0, cpu = 0, before = 0;
        if (tag != "way" || !(words >> w) || w < 0 || w >= ways) continue;
        Shared& s = run.way[w];
        words >> gpu >> cpu >> s.gpu.kernel_wrong >> s.gpu.copy_gbps >> s.gpu.socket_gbps >>
            before >> s.cpu.cpu_wrong >> s.parent_not_written >> s.parent_not_original >>
            s.status;
        s.gpu_answered = gpu == 1;
        s.cpu_answered = cpu == 1;
        s.gpu.before = static_cast<cudaMemAccessFlags>(before);
        run.seen[w] = !words.fail();
    }
    return run;
}

Run run_exporter(int device, std::size_t bytes) {
    return parse_run(tutorial::run_child("host_exporter",
                                         {std::to_string(device), std::to_string(bytes)}, "",
                                         90.0));
}

// How much slower the slower of the two shared ways copies to the worker's GPU than the worker's
// own cudaHostAlloc memory: 1 means as fast.
double shared_over_private(const Run& run) {
    const double shared =
        std::min(run.way[numa_pool].gpu.copy_gbps, run.way[memfd].gpu.copy_gbps);
    const double own = run.way[copied].gpu.copy_gbps;
    return own > 0.0 ? shared / own : 0.0;
}

// Why the section cannot run here ("" where it can): the pool's way needs pools of host NUMA
// memory exported as file descriptors, and a NUMA node the host names for this GPU; the file's
// way, cudaHostRegister and mapped host memory.
std::string why_not_here(int device) {
    if (tutorial::device_attribute(device, cudaDevAttrMemoryPoolsSupported) != 1 ||
        tutorial::device_attribute(device, cudaDevAttrHostNumaMemoryPoolsSupported) != 1) {
        return "this device has no pools of host NUMA memory "
               "(cudaDevAttrHostNumaMemoryPoolsSupported = 0)";
    }
    if ((tutorial::device_attribute(device, cudaDevAttrMemoryPoolSupportedHandleTypes) &
         cudaMemHandleTypePosixFileDescriptor) == 0) {
        return "this device's pools cannot be exported as file descriptors";
    }
    if (const int numa = tutorial::device_attribute(device, cudaDevAttrHostNumaId); numa < 0) {
        return format("the host names no NUMA node for this GPU (cudaDevAttrHostNumaId = %d): a "
                      "shareable pool of host memory is created on one",
                      numa);
    }
    if (tutorial::device_attribute(device, cudaDevAttrHostRegisterSupported) != 1 ||
        tutorial::device_attribute(device, cudaDevAttrCanMapHostMemory) != 1) {
        return "this device cannot pin and map memory the program allocated "
               "(hostRegisterSupported, canMapHostMemory)";
    }
    return "";
}

std::string worker_cpu_text(const Shared& s) {
    if (!s.cpu_answered) return "no answer";
    return s.cpu.cpu_wrong == 0 ? "2x+1, right" : format("%zu wrong", s.cpu.cpu_wrong);
}

std::string parent_text(const Shared& s, int way) {
    if (!s.gpu_answered) return "(no answer)";
    if (way == copied) {
        return s.parent_not_original == 0 ? "no: its own values"
                                          : format("%zu values changed", s.parent_not_original);
    }
    return s.parent_not_written == 0 ? "yes, every value"
                                     : format("%zu values not written", s.parent_not_written);
}

void print_run(const Run& run) {
    tutorial::Table table({{"the way"},
                           {"worker's kernel"},
                           {"worker's CPU"},
                           {"copies to its GPU"},
                           {"parent sees the write"},
                           {"the worker"}});
    for (int w = 0; w < ways; ++w) {
        const Shared& s = run.way[w];
        table.add_row({way_names[w],
                       s.gpu_answered ? format("%zu wrong", s.gpu.kernel_wrong) : "(no answer)",
                       worker_cpu_text(s),
                       s.gpu_answered ? format("%.1f GB/s", s.gpu.copy_gbps) : "-",
                       parent_text(s, w), child_result(s.status).describe()});
    }
    table.print();
    std::printf(
        "\nThe copy's own cost: the worker received the bytes through the socket at %.2f GB/s.\n"
        "The worker's GPU's access to the imported pool before its own cudaMemPoolSetAccess: "
        "%s.\n",
        run.way[copied].gpu.socket_gbps,
        run.way[numa_pool].gpu.before == cudaMemAccessFlagsProtReadWrite ? "read-write"
        : run.way[numa_pool].gpu.before == cudaMemAccessFlagsProtRead    ? "read"
                                                                         : "none");
    std::printf(
        "The parent ran in a child process, so that its refused calls never touch this one; it "
        "%s.\n\n",
        run.exporter.describe().c_str());
}

// The two ways out that CUDA refuses, each with what its entry says.
void claim_refusals(tutorial::Context& ctx, const Run& run) {
    const bool host_pools =
        tutorial::device_attribute(ctx.device, cudaDevAttrHostMemoryPoolsSupported) == 1;
    ctx.claim(
        tutorial::documented_error(
            "host_pool_refused",
            "a pool at cudaMemLocationTypeHost asked for a handle type is refused",
            run.host_pool, "cudaErrorInvalidValue",
            "this driver accepts a shareable pool of host memory at no particular node",
            tutorial::Entry{"Runtime API reference: cudaMemPoolCreate",
                            "cudaMemLocationTypeHost handleTypes cudaErrorInvalidValue", "will"}),
        host_pools ? "" : "this device has no host memory pools (hostMemoryPoolsSupported = 0)");
    ctx.claim(tutorial::observed(
        "legacy_refuses_host_alloc",
        "cudaIpcGetMemHandle refuses cudaHostAlloc memory with cudaErrorInvalidValue",
        run.legacy_handle == "cudaErrorInvalidValue",
        "cudaIpcGetMemHandle(cudaHostAlloc memory) -> " + run.legacy_handle,
        "the cudaIpcGetMemHandle entry takes the base of device memory from cudaMalloc and names "
        "no error for host memory"));
}

// The two ways that share the bytes: the pool's block and the file's pages.
void claim_shared(tutorial::Context& ctx, const Run& run, std::size_t count) {
    const Shared& pool = run.way[numa_pool];
    const Shared& file = run.way[memfd];
    // The export entry: a pool created with a handle type (a HostNuma pool is not refused one)
    // is shared by its descriptor, and its blocks by cudaMemPoolExportPointer and
    // cudaMemPoolImportPointer; cudaMemPoolSetAccess gives the worker's GPU its access. That the
    // write shows to the parent's CPU rests also on the cudaMemPoolCreate entry: "In the case of
    // pools created with cudaMemLocationTypeHostNuma ..., their default accessibility will be
    // from the host CPU" (the parent's, which created the pool).
    ctx.claim(tutorial::documented(
        "numa_block_shared",
        "a HostNuma pool's block reaches the worker: its kernel reads the parent's values, and "
        "its write shows to the parent's CPU",
        pool.gpu_answered && pool.gpu.kernel_wrong == 0 && pool.parent_not_written == 0,
        pool.gpu_answered ? format("%zu of %zu values wrong in the worker's kernel, %zu not "
                                   "written in the parent",
                                   pool.gpu.kernel_wrong, count, pool.parent_not_written)
                          : "the worker " + child_result(pool.status).describe(),
        "the pool or its block did not import, or the worker's GPU was not granted access",
        tutorial::Entry{"Runtime API reference: cudaMemPoolExportToShareableHandle",
                        "cudaMemPoolExportPointer cudaMemPoolImportPointer", "can"}));
    ctx.claim(tutorial::observed(
        "numa_block_worker_cpu",
        "the worker's CPU reads the imported block at its address, with no access call for it",
        pool.cpu_answered && pool.cpu.cpu_wrong == 0,
        pool.cpu_answered ? format("%zu of %zu values wrong", pool.cpu.cpu_wrong, count)
                          : "the worker " + child_result(pool.status).describe(),
        "the cudaMemPoolCreate entry gives a HostNuma pool the host CPU's access where it is "
        "created, and says nothing of the CPU of a process that imports it"));
    // mmap(2), MAP_SHARED: "Updates to the mapping are visible to other processes mapping the
    // same region": one memory behind both mappings. The worker's kernel writes through its
    // registered mapping (cudaHostRegister pins those very pages in place and maps them for the
    // device, memfd_registered below), so the write is an update to the mapping, and shows in
    // the parent's.
    ctx.claim(tutorial::documented(
        "memfd_shared",
        "a memfd mapped shared in each process is one memory: the worker's kernel's write, "
        "through its registered mapping, shows to the parent's CPU",
        file.gpu_answered && file.parent_not_written == 0,
        file.gpu_answered ? format("%zu of %zu values not written in the parent",
                                   file.parent_not_written, count)
                          : "the worker " + child_result(file.status).describe(),
        "one of the mappings was private (a copy on its first write)",
        tutorial::Entry{"Linux man page: mmap", "MAP_SHARED visible other processes",
                        "are visible"}));
    // The GPU's view: cudaHostRegister "Page-locks the memory range specified by ptr and size
    // and maps it for the device(s)" (cudaHostRegisterMapped), and cudaHostGetDevicePointer gives
    // the worker's kernels the device address of its mapping: what the mapping holds (the
    // parent's values), its kernel reads; what its kernel writes, its CPU reads.
    ctx.claim(tutorial::documented(
        "memfd_registered",
        "...and registered, each mapping is its GPU's too: the worker's kernel reads the parent's "
        "values through it, and the worker's CPU reads the kernel's write",
        file.gpu_answered && file.cpu_answered && file.gpu.kernel_wrong == 0 &&
            file.cpu.cpu_wrong == 0,
        file.cpu_answered ? format("%zu of %zu values wrong in the worker's kernel, %zu on its CPU",
                                   file.gpu.kernel_wrong, count, file.cpu.cpu_wrong)
                          : "the worker " + child_result(file.status).describe(),
        "the worker's mapping was not pinned and mapped for its GPU before the kernel used it",
        tutorial::Entry{"Runtime API reference: cudaHostRegister", "memory range device(s)",
                        "maps"}));
}

}  // namespace

tutorial::Result run_host_shared(tutorial::Context& ctx) {
    if (const std::string why = why_not_here(ctx.device); !why.empty()) return ctx.skip(why);
    const std::size_t bytes = ctx.quick() ? (std::size_t{16} << 20) : (std::size_t{64} << 20);
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::printf(
        "The parent fills %s of pinned host memory three ways; each time a worker process\n"
        "reaches it its way, its kernel checks the parent's values, its GPU copies them (the\n"
        "cost), its kernel writes 2 * x + 1 in place, and its CPU reads them back; the parent's\n"
        "CPU then reads its own values. cudaHostAlloc memory has no CUDA way out (the\n"
        "cudaIpcGetMemHandle entry is for cudaMalloc's device memory; the pool and VMM exports\n"
        "for pools and cuMemCreate allocations made with a handle type), so that worker gets a\n"
        "copy through the socket.\n\n",
        tutorial::format_bytes(bytes).c_str());
    const Run run = run_exporter(ctx.device, bytes);
    if (!run.exporter.succeeded()) tutorial::print_child_output(run.exporter);
    print_run(run);
    claim_refusals(ctx, run);
    claim_shared(ctx, run, count);
    // Shared pinned memory is pinned memory: it copies as fast as the worker's own.
    ctx.claim(tutorial::at_least("shared_copies_like_private",
                                 "both shared ways copy to the worker's GPU about as fast as its "
                                 "own cudaHostAlloc memory (the slower / its own)",
                                 shared_over_private(run), 0.5, "x",
                                 "one of the shared mappings was not pinned, so its copies were "
                                 "staged like pageable memory's")
                  .again([&] { return shared_over_private(run_exporter(ctx.device, bytes)); }));
    const Shared& pool = run.way[numa_pool];
    const Shared& file = run.way[memfd];
    const Shared& copy = run.way[copied];
    const bool pool_right =
        pool.gpu_answered && pool.gpu.kernel_wrong == 0 && pool.parent_not_written == 0;
    const bool file_right = child_result(file.status).succeeded() && file.gpu.kernel_wrong == 0 &&
                            file.cpu.cpu_wrong == 0 && file.parent_not_written == 0;
    const bool copy_right = child_result(copy.status).succeeded() && copy.gpu.kernel_wrong == 0 &&
                            copy.parent_not_original == 0;
    const bool all_seen = run.seen[copied] && run.seen[numa_pool] && run.seen[memfd];
    return ctx.verdict(
        run.exporter.succeeded() && all_seen && pool_right && file_right && copy_right,
        format("the HostNuma pool's block and the memfd's pages reached the worker (%zu and %zu "
               "of %zu values wrong in its kernel) and its write reached the parent; the "
               "cudaHostAlloc copy stayed a copy",
               pool.gpu.kernel_wrong, file.gpu.kernel_wrong, count));
}

TUTORIAL_SECTION(host_shared, run_host_shared);
TUTORIAL_CHILD(host_exporter, child_host_exporter);
TUTORIAL_CHILD(host_worker, child_host_worker);
