// Checks of section which_memory: every kind of memory against every way of sharing it with
// another process, in one table. Each cell is a real attempt: the master exports the memory that
// way (../which_memory.cu) and, when the export works, one worker process imports it and checks
// the data; otherwise the cell holds the exact error of the call that refused. Three cells are
// documented, each way sharing the memory its reference entries are written for, and the verdict
// rests on them. The refusals are this driver's: the entries say which memory each call takes,
// and name no error for other memory.
#include "07_ipc/which_memory.cu"

#include "../helpers/channel.hpp"
#include "../helpers/ipc_common.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using tutorial::format;

namespace {

constexpr std::uint32_t seed = 97;
constexpr std::size_t interior_offset = 4096;  // bytes into the cudaMalloc block

enum Way { legacy, pool_export, vmm_export, ways };
const char* const way_names[ways] = {"cudaIpcGetMemHandle", "pool export",
                                     "cuMemExportToShareableHandle"};

enum Kind {
    plain,
    interior,
    default_pool,
    ipc_pool,
    managed,
    pinned_host,
    vmm_none,
    vmm_fd,
    kinds
};
const char* const kind_names[kinds] = {"cudaMalloc",
                                       "cudaMalloc, 4 KiB into the block",
                                       "cudaMallocAsync (default pool)",
                                       "cudaMallocFromPoolAsync (exportable pool)",
                                       "cudaMallocManaged",
                                       "cudaMallocHost",
                                       "cuMemCreate, no handle type",
                                       "cuMemCreate, POSIX fd handle type"};

// Where each way is documented, in the words that say which memory it shares, and how.
const tutorial::Entry legacy_entry{"Programming Guide, Interprocess Communication",
                                   "cudaIpcGetMemHandle cudaIpcOpenMemHandle", "can"};
const tutorial::Entry pool_entry{"Runtime API reference: cudaMemPoolExportToShareableHandle",
                                 "cudaMemPoolExportPointer cudaMemPoolImportPointer", "can"};
const tutorial::Entry vmm_entry{"Driver API reference: cuMemExportToShareableHandle",
                                "cuMemImportFromShareableHandle cuMemMap", "can"};

// The documented cells: legacy IPC for a cudaMalloc block (by its base pointer), pool export for
// a block of a pool created with a handle type, cuMemExportToShareableHandle for cuMemCreate
// memory created with one. Every other cell is outside some entry's contract (an interior
// pointer, where cudaIpcGetMemHandle asks for the base; memory a call is not written for): what
// it shows is what this driver did.
bool expected(Kind kind, Way way) {
    return (way == legacy && kind == plain) || (way == pool_export && kind == ipc_pool) ||
           (way == vmm_export && kind == vmm_fd);
}

// Read the shared memory and say what was found: "ok <wrong values> <first value>".
std::string check_reply(const void* data, std::size_t bytes, std::size_t first) {
    const auto* values = static_cast<const std::uint32_t*>(data);
    const std::size_t count = bytes / sizeof(std::uint32_t) - first;
    const std::size_t wrong = mismatches_on_device(values, count, seed, {}, first);
    std::uint32_t first_value = 0;
    CUDA_CHECK(cudaMemcpy(&first_value, values, sizeof first_value, cudaMemcpyDeviceToHost));
    return format("ok %zu %u", wrong, first_value);
}

std::string refusal(const char* call, const char* error) {
    return format("error %s %s", call, error);
}

std::string reply_legacy(const std::string& hex, std::size_t bytes, std::size_t first) {
    cudaIpcMemHandle_t handle{};
    if (!from_hex(hex, &handle, sizeof handle)) return "error from_hex bad-handle";
    void* opened = nullptr;
    const cudaError_t err = import_legacy(handle, &opened);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return refusal("cudaIpcOpenMemHandle", cudaGetErrorName(err));
    }
    const std::string reply = check_reply(opened, bytes, first);
    CUDA_CHECK(cudaIpcCloseMemHandle(opened));
    return reply;
}

std::string reply_pool(int device, const std::string& hex, int fd, std::size_t bytes) {
    cudaMemPoolPtrExportData data{};
    if (!from_hex(hex, &data, sizeof data)) return "error from_hex bad-export-data";
    cudaMemPool_t pool = nullptr;
    void* block = nullptr;
    const char* failed = "";
    const cudaError_t err = import_from_pool(device, fd, &data, &pool, &block, &failed);
    const bool pool_imported =
        err == cudaSuccess || std::string(failed) != "cudaMemPoolImportFromShareableHandle";
    std::string reply;
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        reply = refusal(failed, cudaGetErrorName(err));
    } else {
        reply = check_reply(block, bytes, 0);
        CUDA_CHECK(cudaFree(block));  // the importer frees first
    }
    if (pool_imported) CUDA_CHECK(cudaMemPoolDestroy(pool));
    return reply;
}

std::string reply_vmm(int device, int fd, std::size_t bytes) {
    CUdeviceptr address = 0;
    const CUresult err = import_vmm(device, fd, bytes, &address);
    if (err != CUDA_SUCCESS) {
        return refusal("cuMemImportFromShareableHandle", tutorial::driver_error_name(err));
    }
    const std::string reply = check_reply(reinterpret_cast<void*>(address), bytes, 0);
    tutorial::vmm_unmap(address, bytes);
    tutorial::vmm_free(address, bytes);
    return reply;
}

}  // namespace

// Child role: one request per line on the channel, "<way> <bytes> <first element> <hex>", with a
// descriptor after it for the pool and VMM ways; one reply line each. Ends at "end" or EOF.
int child_share_worker(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const int socket = tutorial::child_passed_fd;
    std::string line;
    while (read_line(socket, line, task_timeout_s) && line != "end") {
        std::istringstream words(line);
        std::string way, hex;
        std::size_t bytes = 0, first = 0;
        words >> way >> bytes >> first >> hex;
        const int fd = way == "legacy" ? -1 : receive_descriptor(socket, 10.0);
        std::string reply = "error receive_descriptor none";
        if (way == "legacy") reply = reply_legacy(hex, bytes, first);
        if (way == "pool" && fd >= 0) reply = reply_pool(device, hex, fd, bytes);
        if (way == "vmm" && fd >= 0) reply = reply_vmm(device, fd, bytes);
        if (!send_line(socket, reply)) return 4;
    }
    return 0;
}

namespace {

// One row's memory: what the master allocated, and the pointer it tries to share.
struct Memory {
    Kind kind;
    void* shared = nullptr;
    std::size_t bytes = 0;         // of the whole allocation
    std::size_t first = 0;         // the element `shared` points at
    cudaMemPool_t pool = nullptr;  // the pool it came from, for the pool rows
    CUmemGenericAllocationHandle vmm = 0;
    CUdeviceptr vmm_address = 0;
};

Memory allocate(Kind kind, int device, cudaStream_t stream) {
    Memory m{kind};
    m.bytes = 2 << 20;
    void* p = nullptr;
    if (kind == plain || kind == interior) CUDA_CHECK(cudaMalloc(&p, m.bytes));
    if (kind == default_pool) {
        CUDA_CHECK(cudaDeviceGetDefaultMemPool(&m.pool, device));
        CUDA_CHECK(cudaMallocAsync(&p, m.bytes, stream));
    }
    if (kind == ipc_pool) {
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
        props.location = {cudaMemLocationTypeDevice, device};
        CUDA_CHECK(cudaMemPoolCreate(&m.pool, &props));
        CUDA_CHECK(cudaMallocFromPoolAsync(&p, m.bytes, m.pool, stream));
    }
    if (kind == managed) CUDA_CHECK(cudaMallocManaged(&p, m.bytes));
    if (kind == pinned_host) CUDA_CHECK(cudaMallocHost(&p, m.bytes));
    if (kind == vmm_none || kind == vmm_fd) {
        const CUmemAllocationProp prop = tutorial::vmm_properties(
            device,
            kind == vmm_fd ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE);
        m.bytes = tutorial::round_up(m.bytes, tutorial::vmm_granularity(prop));
        m.vmm = tutorial::vmm_create(prop, m.bytes);
        m.vmm_address = tutorial::vmm_reserve(m.bytes, 0);
        tutorial::vmm_map(m.vmm_address, m.bytes, m.vmm);
        tutorial::vmm_set_access(m.vmm_address, m.bytes, device);
        p = reinterpret_cast<void*>(m.vmm_address);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (kind == pinned_host) {
        fill_on_host(static_cast<std::uint32_t*>(p), m.bytes / 4, seed);
    } else {
        fill_on_device(static_cast<std::uint32_t*>(p), m.bytes / 4, seed);
    }
    m.first = kind == interior ? interior_offset / 4 : 0;
    m.shared = static_cast<char*>(p) + (kind == interior ? interior_offset : 0);
    return m;
}

void release(Memory& m, cudaStream_t stream) {
    void* base = static_cast<char*>(m.shared) - m.first * 4;
    if (m.kind == plain || m.kind == interior || m.kind == managed) CUDA_CHECK(cudaFree(base));
    if (m.kind == pinned_host) CUDA_CHECK(cudaFreeHost(base));
    if (m.kind == default_pool || m.kind == ipc_pool) {
        CUDA_CHECK(cudaFreeAsync(base, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    if (m.kind == ipc_pool) CUDA_CHECK(cudaMemPoolDestroy(m.pool));
    if (m.vmm != 0) {
        tutorial::vmm_unmap(m.vmm_address, m.bytes);
        tutorial::vmm_free(m.vmm_address, m.bytes);
        tutorial::vmm_release(m.vmm);
    }
}

struct Cell {
    bool shared = false;  // the worker reached the memory
    std::size_t wrong = 0;
    std::uint32_t first_value = 0;
    std::string call, error;  // the call that refused, and its error
};

// Sends one request and turns the worker's reply into a cell.
Cell ask_worker(int socket, const std::string& request, int fd) {
    Cell c;
    std::string reply;
    if (!send_line(socket, request) || (fd >= 0 && !send_descriptor(socket, fd)) ||
        !read_line(socket, reply, 60.0)) {
        c.call = "the-worker";
        c.error = "no-reply";
        return c;
    }
    std::istringstream words(reply);
    std::string status;
    words >> status;
    if (status == "ok") {
        c.shared = true;
        words >> c.wrong >> c.first_value;
    } else {
        words >> c.call >> c.error;
    }
    return c;
}

Cell refused(const char* call, const char* error) {
    Cell c;
    c.call = call;
    c.error = error;
    return c;
}

std::string header(const char* way, const Memory& m) {
    return format("%s %zu %zu ", way, m.bytes, m.first);
}

Cell share_legacy(const Memory& m, int socket) {
    cudaIpcMemHandle_t handle{};
    const cudaError_t err = export_legacy(m.shared, &handle);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return refused("cudaIpcGetMemHandle", cudaGetErrorName(err));
    }
    return ask_worker(socket, header("legacy", m) + to_hex(&handle, sizeof handle), -1);
}

// A pool's block travels as its pool (exported once) plus the block's export data. For memory
// from no pool, cudaMemPoolExportPointer is the call that refuses.
Cell share_pool(const Memory& m, int socket, std::string& before_pool_export) {
    cudaMemPoolPtrExportData data{};
    if (m.pool == nullptr) {
        const cudaError_t err = cudaMemPoolExportPointer(&data, m.shared);
        (void)cudaGetLastError();
        // Refused on driver 580 (the entry is for blocks of a shared pool); were it to succeed,
        // there would still be no pool to send, and the cell would show "cudaSuccess".
        return refused("cudaMemPoolExportPointer", cudaGetErrorName(err));
    }
    if (m.kind == ipc_pool) {  // the block exported before its pool: what does this driver do?
        before_pool_export = cudaGetErrorName(cudaMemPoolExportPointer(&data, m.shared));
        (void)cudaGetLastError();
    }
    int fd = -1;
    const char* failed = "";
    const cudaError_t err = export_from_pool(m.pool, m.shared, &fd, &data, &failed);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        if (fd >= 0) close(fd);
        return refused(failed, cudaGetErrorName(err));
    }
    const Cell c = ask_worker(socket, header("pool", m) + to_hex(&data, sizeof data), fd);
    close(fd);
    return c;
}

Cell share_vmm(const Memory& m, int socket) {
    int fd = -1;
    const char* failed = "";
    const CUresult err = export_vmm(m.shared, &fd, &failed);
    if (err != CUDA_SUCCESS) return refused(failed, tutorial::driver_error_name(err));
    const Cell c = ask_worker(socket, header("vmm", m) + "-", fd);
    close(fd);
    return c;
}

struct Grid {
    Cell cells[kinds][ways];
    std::string before_pool_export;    // cudaMemPoolExportPointer before the pool was exported
    std::string worker = "(no line)";  // how the importing worker ended
    bool worker_ok = false;
};

Grid fill_grid(int device) {
    Grid g;
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    Channel channel;
    tutorial::ChildProcess worker("share_worker", {std::to_string(device)}, channel.worker_end());
    channel.close_worker_end();
    for (int k = 0; k < kinds; ++k) {
        Memory m = allocate(static_cast<Kind>(k), device, stream);
        g.cells[k][legacy] = share_legacy(m, channel.master_end());
        g.cells[k][pool_export] = share_pool(m, channel.master_end(), g.before_pool_export);
        g.cells[k][vmm_export] = share_vmm(m, channel.master_end());
        release(m, stream);
    }
    send_line(channel.master_end(), "end");
    const tutorial::ChildResult ended = worker.wait(30.0);
    g.worker = ended.describe();
    g.worker_ok = ended.succeeded();
    CUDA_CHECK(cudaStreamDestroy(stream));
    return g;
}

// The exporter's cells, one line each, for the section's own process to read back.
void print_grid(const Grid& g) {
    for (int k = 0; k < kinds; ++k) {
        for (int w = 0; w < ways; ++w) {
            const Cell& c = g.cells[k][w];
            std::printf("cell %d %d %d %zu %u %s %s\n", k, w, c.shared ? 1 : 0, c.wrong,
                        c.first_value, c.shared ? "-" : c.call.c_str(),
                        c.shared ? "-" : c.error.c_str());
        }
    }
    std::printf("before_pool_export %s\nworker_ok %d %s\n", g.before_pool_export.c_str(),
                g.worker_ok ? 1 : 0, g.worker.c_str());
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

Grid parse_grid(const std::string& output) {
    Grid g;
    std::istringstream lines(output);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string tag;
        words >> tag;
        int k = 0, w = 0, shared = 0;
        if (tag == "cell" && words >> k >> w >> shared && k >= 0 && k < kinds && w >= 0 &&
            w < ways) {
            Cell& c = g.cells[k][w];
            c.shared = shared == 1;
            words >> c.wrong >> c.first_value >> c.call >> c.error;
        }
        if (tag == "before_pool_export") words >> g.before_pool_export;
        if (tag == "worker_ok") {
            words >> shared;
            g.worker_ok = shared == 1;
            std::getline(words >> std::ws, g.worker);
        }
    }
    return g;
}

std::string cell_text(const Cell& c, Kind kind) {
    if (!c.shared) return c.error;
    if (kind == interior && c.first_value == pattern(0, seed)) return "opens the block's start";
    return format("yes, %zu wrong", c.wrong);
}

// A documented cell as its entries describe it: shared, with every value right.
bool shared_right(const Cell& c) {
    return c.shared && c.wrong == 0;
}

int documented_shared(const Grid& g) {
    int right = 0;
    for (int k = 0; k < kinds; ++k) {
        for (int w = 0; w < ways; ++w) {
            if (expected(static_cast<Kind>(k), static_cast<Way>(w))) {
                right += shared_right(g.cells[k][w]) ? 1 : 0;
            }
        }
    }
    return right;
}

std::string refusal_text(const Cell& c) {
    return c.shared ? "shared" : c.call + " -> " + c.error;
}

// Legacy IPC: documented for the cudaMalloc block; for every other kind, the driver's answer.
void claim_legacy(tutorial::Context& ctx, const Grid& g) {
    std::string legacy_errors;
    bool legacy_refused = true;
    for (int k = default_pool; k < kinds; ++k) {
        const Cell& c = g.cells[k][legacy];
        legacy_refused = legacy_refused && !c.shared && c.error == "cudaErrorInvalidValue";
        legacy_errors += format("%s%s: %s", k == default_pool ? "" : "; ", kind_names[k],
                                c.shared ? "shared" : c.error.c_str());
    }
    const Cell& block = g.cells[plain][legacy];
    ctx.claim(tutorial::documented(
        "legacy_shares_cudamalloc", "another process opens a cudaMalloc block's legacy handle and reads every value",
        shared_right(block), "cudaMalloc: " + cell_text(block, plain),
        "the worker could not open the handle, or it mapped other memory", legacy_entry));
    ctx.claim(tutorial::observed(
        "legacy_refuses_others", "cudaIpcGetMemHandle refuses every other kind of memory, each with cudaErrorInvalidValue",
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
        "pool_block_shared", "a block of a pool created with a handle type reaches another process through its pool",
        shared_right(own_pool), "exportable pool: " + cell_text(own_pool, ipc_pool),
        "the pool or the block's export data was refused; the list of refusals says which",
        pool_entry));
    ctx.claim(tutorial::observed(
        "default_pool_refused", "the default pool, created with no handle type, is refused by "
        "cudaMemPoolExportToShareableHandle",
        default_export.call == "cudaMemPoolExportToShareableHandle" &&
            default_export.error == "cudaErrorInvalidValue",
        "default pool: " + refusal_text(default_export),
        "the cudaMemPoolExportToShareableHandle entry is for pools created with a handle type "
        "and names no error for others"));
    ctx.claim(tutorial::observed(
        "block_refused_before_pool", "a pool's block is refused by cudaMemPoolExportPointer until the pool itself is exported",
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
        "vmm_shared", "cuMemCreate memory created with the POSIX fd handle type reaches another process as a "
        "descriptor",
        shared_right(with_type), "with the POSIX fd type: " + cell_text(with_type, vmm_fd),
        "the export or the import was refused; the list of refusals says which", vmm_entry));
    ctx.claim(tutorial::observed(
        "untyped_vmm_refused", "cuMemCreate memory created without a handle type is refused by "
        "cuMemExportToShareableHandle",
        without.call == "cuMemExportToShareableHandle" &&
            without.error == "CUDA_ERROR_INVALID_VALUE",
        "without: " + refusal_text(without),
        "the cuMemExportToShareableHandle entry names no error for memory created without the "
        "handle type asked for"));
}

tutorial::Result report_which_memory(tutorial::Context& ctx, const Grid& g) {
    claim_legacy(ctx, g);
    claim_pools(ctx, g);
    claim_vmm(ctx, g);
    const int right = documented_shared(g);
    int refusals = 0;
    for (int k = 0; k < kinds; ++k) {
        for (int w = 0; w < ways; ++w) refusals += g.cells[k][w].shared ? 0 : 1;
    }
    return ctx.verdict(right == ways && g.worker_ok,
                       format("%d of %d ways shared the memory each is documented for, every "
                              "value right (the %d refusals are this driver's answers)",
                              right, static_cast<int>(ways), refusals));
}

}  // namespace

// Child role: the exporting side of the whole table. Many of its calls are refused on purpose, so
// they run here rather than in the section's own process; it starts the importing worker itself.
int child_share_exporter(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const Grid g = fill_grid(device);
    print_grid(g);
    return g.worker_ok ? 0 : 3;
}

tutorial::Result run_which_memory(tutorial::Context& ctx) {
    // The table needs all three ways on this device.
    if (const std::string why = why_not_every_way(ctx.device); !why.empty()) return ctx.skip(why);
    std::printf(
        "Eight kinds of memory, 2 MiB each, filled with a known pattern; three ways to share\n"
        "each. Where the export works, a worker process imports the memory and checks the\n"
        "pattern; otherwise the cell shows the refusing call's error (listed below the "
        "table).\n\n");
    const tutorial::ChildResult exporter =
        tutorial::run_child("share_exporter", {std::to_string(ctx.device)}, "", 90.0);
    const Grid g = parse_grid(exporter.output);
    tutorial::Table table(
        {{"memory"}, {way_names[legacy]}, {way_names[pool_export]}, {way_names[vmm_export]}});
    for (int k = 0; k < kinds; ++k) {
        std::vector<std::string> row{kind_names[k]};
        for (int w = 0; w < ways; ++w) {
            row.push_back(cell_text(g.cells[k][w], static_cast<Kind>(k)));
        }
        table.add_row(row);
    }
    table.print();
    std::printf("\nThe refusals, each by the first call that failed:\n");
    for (int k = 0; k < kinds; ++k) {
        for (int w = 0; w < ways; ++w) {
            const Cell& c = g.cells[k][w];
            if (c.shared) continue;
            std::printf("  %s / %s: %s -> %s\n", kind_names[k], way_names[w], c.call.c_str(),
                        c.error.c_str());
        }
    }
    std::printf(
        "\nThe exporting side ran in a child process, so that its refused calls never touch this\n"
        "one; it %s, and its importing worker %s.\n"
        "cudaMemPoolExportPointer on the exportable pool's block before the pool itself was\n"
        "exported -> %s\n\n",
        exporter.describe().c_str(), g.worker.c_str(), g.before_pool_export.c_str());
    return report_which_memory(ctx, g);
}

TUTORIAL_SECTION(which_memory, run_which_memory);
TUTORIAL_CHILD(share_exporter, child_share_exporter);
TUTORIAL_CHILD(share_worker, child_share_worker);
