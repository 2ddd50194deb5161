// Section which_memory: every kind of memory against the three ways of sharing it.
// Built alone, from the course's folder (mkdir -p build first), then ./build/which_memory:
//   nvcc -std=c++17 -I. 07_ipc/which_memory.cu common/standalone.cu -o build/which_memory
//   (or in 07_ipc/: nvcc -std=c++17 -I.. which_memory.cu ../common/standalone.cu
//       -o ../build/which_memory)  (on the same line)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/process.hpp"
#include "common/vmm.hpp"
#include <sys/mman.h>
#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
namespace {

// Three ways to hand device memory to another process (a legacy IPC handle, a pool's export, a
// VMM descriptor), each written for its own kind of memory. The walkthrough tries each way on
// each of eleven kinds (the last three host memory, as section host_shared shares it); where the
// export works, a worker process imports the memory and checks it.

// Workers: this program started again, a Unix socket as stdin and stdout; descriptors cross it
// by SCM_RIGHTS, as in section vmm_fd (common/process.hpp).
using tutorial::Worker, tutorial::read_all, tutorial::receive_descriptor, tutorial::send_all,
    tutorial::send_descriptor, tutorial::start_worker, tutorial::wait_for;

constexpr std::uint32_t seed = 97;             // every kind holds pattern(i, seed)
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
    host_numa_pool,
    memfd_registered,
    host_alloc,
    kinds
};
const char* const kind_names[kinds] = {"cudaMalloc",
                                       "cudaMalloc, 4 KiB into the block",
                                       "cudaMallocAsync (default pool)",
                                       "cudaMallocFromPoolAsync (exportable pool)",
                                       "cudaMallocManaged",
                                       "cudaMallocHost",
                                       "cuMemCreate, no handle type",
                                       "cuMemCreate, POSIX fd handle type",
                                       "cudaMallocFromPoolAsync (HostNuma pool)",
                                       "memfd_create + mmap + cudaHostRegister",
                                       "cudaHostAlloc (portable, mapped)"};

// Step 1. One kind of memory, 2 MiB of it (cuMemCreate's rounded up to its granularity), filled
// with the pattern. `shared` is the pointer every way is given: for `interior`, 4 KiB into the
// block.
struct Memory {
    Kind kind;
    void* base = nullptr;
    void* shared = nullptr;
    std::size_t bytes = 2 << 20;   // of the whole allocation
    std::size_t first = 0;         // the element `shared` points at
    cudaMemPool_t pool = nullptr;  // the pool it came from, for the pool kinds
    CUmemGenericAllocationHandle vmm = 0;
    int memfd = -1;  // the file whose pages memfd_registered maps
};

// A pool whose blocks may be exported, of device memory or of host memory on one NUMA node.
cudaMemPool_t exportable_pool(cudaMemLocation where) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    props.location = where;
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    return pool;
}

void allocate_host(Memory& m, int device, cudaStream_t stream);

Memory allocate(Kind kind, int device, cudaStream_t stream) {
    Memory m{kind};
    if (kind == plain || kind == interior) CUDA_CHECK(cudaMalloc(&m.base, m.bytes));
    if (kind == default_pool) {
        CUDA_CHECK(cudaDeviceGetDefaultMemPool(&m.pool, device));
        CUDA_CHECK(cudaMallocAsync(&m.base, m.bytes, stream));
    }
    if (kind == ipc_pool) {
        m.pool = exportable_pool({cudaMemLocationTypeDevice, device});
        CUDA_CHECK(cudaMallocFromPoolAsync(&m.base, m.bytes, m.pool, stream));
    }
    if (kind == managed) CUDA_CHECK(cudaMallocManaged(&m.base, m.bytes));
    if (kind == pinned_host) CUDA_CHECK(cudaMallocHost(&m.base, m.bytes));
    if (kind == vmm_none || kind == vmm_fd) {
        const CUmemAllocationProp prop = tutorial::vmm_properties(
            device,
            kind == vmm_fd ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE);
        m.bytes = tutorial::round_up(m.bytes, tutorial::vmm_granularity(prop));
        m.vmm = tutorial::vmm_create(prop, m.bytes);
        const CUdeviceptr address = tutorial::vmm_reserve(m.bytes, 0);
        tutorial::vmm_map(address, m.bytes, m.vmm);
        tutorial::vmm_set_access(address, m.bytes, device);
        m.base = reinterpret_cast<void*>(address);
    }
    if (kind >= host_numa_pool) allocate_host(m, device, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    auto* values = static_cast<std::uint32_t*>(m.base);
    const bool on_host = kind == pinned_host || kind >= host_numa_pool;
    if (on_host) fill_on_host(values, m.bytes / 4, seed);
    if (!on_host) fill_on_device(values, m.bytes / 4, seed);
    m.first = kind == interior ? interior_offset / 4 : 0;
    m.shared = static_cast<char*>(m.base) + m.first * 4;
    return m;
}

// The three kinds of host memory: a block of an exportable pool on the GPU's host NUMA node
// (its CPU may use it at once), a memfd's pages mapped shared and pinned, cudaHostAlloc memory.
void allocate_host(Memory& m, int device, cudaStream_t stream) {
    if (m.kind == host_numa_pool) {
        int numa_id = -1;
        CUDA_CHECK(cudaDeviceGetAttribute(&numa_id, cudaDevAttrHostNumaId, device));
        m.pool = exportable_pool({cudaMemLocationTypeHostNuma, numa_id});
        CUDA_CHECK(cudaMallocFromPoolAsync(&m.base, m.bytes, m.pool, stream));
    }
    if (m.kind == memfd_registered) {
        m.memfd = memfd_create("which_memory", MFD_CLOEXEC);
        if (m.memfd < 0 || ftruncate(m.memfd, static_cast<off_t>(m.bytes)) != 0) {
            std::perror("memfd_create");
            std::exit(1);
        }
        m.base = mmap(nullptr, m.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m.memfd, 0);
        if (m.base == MAP_FAILED) {
            std::perror("mmap");
            std::exit(1);
        }
        CUDA_CHECK(cudaHostRegister(m.base, m.bytes, cudaHostRegisterMapped));
    }
    if (m.kind == host_alloc) {
        CUDA_CHECK(cudaHostAlloc(&m.base, m.bytes, cudaHostAllocPortable | cudaHostAllocMapped));
    }
}

void release(const Memory& m, cudaStream_t stream) {
    if (m.kind == plain || m.kind == interior || m.kind == managed) CUDA_CHECK(cudaFree(m.base));
    if (m.kind == pinned_host || m.kind == host_alloc) CUDA_CHECK(cudaFreeHost(m.base));
    if (m.kind == default_pool || m.kind == ipc_pool || m.kind == host_numa_pool) {
        CUDA_CHECK(cudaFreeAsync(m.base, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    if (m.kind == ipc_pool || m.kind == host_numa_pool) CUDA_CHECK(cudaMemPoolDestroy(m.pool));
    if (m.kind == memfd_registered) {
        CUDA_CHECK(cudaHostUnregister(m.base));
        munmap(m.base, m.bytes);
        close(m.memfd);
    }
    if (m.vmm != 0) {
        const CUdeviceptr address = reinterpret_cast<CUdeviceptr>(m.base);
        tutorial::vmm_unmap(address, m.bytes);
        tutorial::vmm_free(address, m.bytes);
        tutorial::vmm_release(m.vmm);
    }
}

// Step 2. The exporter's side of each way. Each returns the status of its first call that failed
// and names that call in `failed`.
// Legacy IPC: a handle for a cudaMalloc block, by its base pointer.
cudaError_t export_legacy(void* pointer, cudaIpcMemHandle_t* handle, const char** failed) {
    *failed = "cudaIpcGetMemHandle";
    return cudaIpcGetMemHandle(handle, pointer);
}

// A block from an exportable pool: the pool as a file descriptor, then the block's export data.
cudaError_t export_from_pool(cudaMemPool_t pool, void* pointer, int* fd,
                             cudaMemPoolPtrExportData* data, const char** failed) {
    *failed = "cudaMemPoolExportToShareableHandle";
    const cudaError_t err =
        cudaMemPoolExportToShareableHandle(fd, pool, cudaMemHandleTypePosixFileDescriptor, 0);
    if (err != cudaSuccess) return err;
    *failed = "cudaMemPoolExportPointer";
    return cudaMemPoolExportPointer(data, pointer);
}

// cuMemCreate memory: its allocation handle, found from any address in it, then a descriptor.
CUresult export_vmm(void* pointer, int* fd, const char** failed) {
    const auto cuMemRetainAllocationHandle = DRIVER_FUNCTION(cuMemRetainAllocationHandle);
    const auto cuMemExportToShareableHandle = DRIVER_FUNCTION(cuMemExportToShareableHandle);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    CUmemGenericAllocationHandle memory = 0;
    *failed = "cuMemRetainAllocationHandle";
    CUresult err = cuMemRetainAllocationHandle(&memory, pointer);
    if (err != CUDA_SUCCESS) return err;
    *failed = "cuMemExportToShareableHandle";
    err = cuMemExportToShareableHandle(fd, memory, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CU_CHECK(cuMemRelease(memory));  // the retain took a reference; the allocation keeps its own
    return err;
}

// Step 3. The importer's side, in another process.
// Legacy IPC: the handle opens at an address of this process (cudaIpcCloseMemHandle when done).
cudaError_t import_legacy(const cudaIpcMemHandle_t& handle, void** opened) {
    return cudaIpcOpenMemHandle(opened, handle, cudaIpcMemLazyEnablePeerAccess);
}

// A pool's block: the pool from its descriptor, this GPU given access (a pool of host memory has
// none of its own), then the block from its export data (cudaFree it, then cudaMemPoolDestroy
// the pool, before the exporter frees it).
cudaError_t import_from_pool(int device, int fd, cudaMemPoolPtrExportData* data,
                             cudaMemPool_t* pool, void** block, const char** failed) {
    *failed = "cudaMemPoolImportFromShareableHandle";
    cudaError_t err = cudaMemPoolImportFromShareableHandle(
        pool, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
        cudaMemHandleTypePosixFileDescriptor, 0);
    close(fd);
    if (err != cudaSuccess) return err;
    const cudaMemAccessDesc grant{{cudaMemLocationTypeDevice, device},
                                  cudaMemAccessFlagsProtReadWrite};
    *failed = "cudaMemPoolSetAccess";
    err = cudaMemPoolSetAccess(*pool, &grant, 1);
    if (err != cudaSuccess) return err;
    *failed = "cudaMemPoolImportPointer";
    return cudaMemPoolImportPointer(block, *pool, data);
}

// cuMemCreate memory: the descriptor becomes this process's handle to the allocation, mapped at
// an address of its own; the mapping keeps the memory (unmap and free the range when done).
CUresult import_vmm(int device, int fd, std::size_t bytes, CUdeviceptr* address) {
    const auto cuMemImportFromShareableHandle = DRIVER_FUNCTION(cuMemImportFromShareableHandle);
    CUmemGenericAllocationHandle memory = 0;
    const CUresult err = cuMemImportFromShareableHandle(
        &memory, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    close(fd);
    if (err != CUDA_SUCCESS) return err;
    *address = tutorial::vmm_reserve(bytes, 0);
    tutorial::vmm_map(*address, bytes, memory);
    tutorial::vmm_set_access(*address, bytes, device);
    tutorial::vmm_release(memory);
    return err;
}

// One cell of the table: the memory reached in the other process (its values that are not the
// pattern, and the first one, which says where an interior handle led), or the call that
// refused, with its error. It travels as plain bytes.
struct Cell {
    bool shared;
    std::size_t wrong;
    std::uint32_t first_value;
    char call[48];
    char error[48];
};

Cell refused(const char* call, const char* error) {
    Cell c{};
    std::strncpy(c.call, call, sizeof c.call - 1);
    std::strncpy(c.error, error, sizeof c.error - 1);
    return c;
}

Cell reached(const void* data, std::size_t bytes, std::size_t first) {
    const auto* values = static_cast<const std::uint32_t*>(data);
    Cell c{};
    c.shared = true;
    c.wrong = mismatches_on_device(values, bytes / 4 - first, seed, {}, first);
    CUDA_CHECK(cudaMemcpy(&c.first_value, values, sizeof c.first_value, cudaMemcpyDefault));
    return c;
}

// What the exporter sends the importer for one cell: the way, the memory's size and the element
// its pointer is at, the handle or the export data; for the pool and VMM ways a descriptor after.
struct Request {
    Way way;
    std::size_t bytes, first;
    cudaIpcMemHandle_t handle;
    cudaMemPoolPtrExportData data;
};

Cell import_one(int device, Request& r, int fd) {
    const char* failed = "";
    if (r.way == legacy) {
        void* opened = nullptr;
        const cudaError_t err = import_legacy(r.handle, &opened);
        if (err != cudaSuccess) return refused("cudaIpcOpenMemHandle", cudaGetErrorName(err));
        const Cell c = reached(opened, r.bytes, r.first);
        CUDA_CHECK(cudaIpcCloseMemHandle(opened));
        return c;
    }
    if (r.way == pool_export) {
        cudaMemPool_t pool = nullptr;
        void* block = nullptr;
        const cudaError_t err = import_from_pool(device, fd, &r.data, &pool, &block, &failed);
        const Cell c = err == cudaSuccess ? reached(block, r.bytes, 0)
                                          : refused(failed, cudaGetErrorName(err));
        if (err == cudaSuccess) CUDA_CHECK(cudaFree(block));  // the importer frees first
        if (pool != nullptr) CUDA_CHECK(cudaMemPoolDestroy(pool));
        return c;
    }
    CUdeviceptr address = 0;
    const CUresult err = import_vmm(device, fd, r.bytes, &address);
    if (err != CUDA_SUCCESS) {
        return refused("cuMemImportFromShareableHandle", tutorial::driver_error_name(err));
    }
    const Cell c = reached(reinterpret_cast<void*>(address), r.bytes, 0);
    tutorial::vmm_unmap(address, r.bytes);
    tutorial::vmm_free(address, r.bytes);
    return c;
}

// The importer process: one request after another, each answered with its cell, until the
// exporter closes the socket. A refusal is an answer here, so its error is cleared.
int importer(int device) {
    CUDA_CHECK(cudaSetDevice(device));
    Request r{};
    while (read_all(STDIN_FILENO, &r, sizeof r)) {
        const int fd = r.way == legacy ? -1 : receive_descriptor(STDIN_FILENO);
        const Cell c = r.way != legacy && fd < 0 ? refused("the-socket", "no-descriptor")
                                                 : import_one(device, r, fd);
        (void)cudaGetLastError();
        if (!send_all(STDOUT_FILENO, &c, sizeof c)) return 4;
    }
    return 0;
}

// The exporter's side of one cell: the export; then, if it worked, the request to the importer
// and its answer; else the refusal. A refusal is an answer here, so its error is cleared.
Cell ask(const Worker& importer, const Request& r, int fd) {
    Cell c = refused("the-importer", "no-answer");
    const bool asked =
        send_all(importer.socket, &r, sizeof r) && (fd < 0 || send_descriptor(importer.socket, fd));
    if (fd >= 0) close(fd);
    if (asked) read_all(importer.socket, &c, sizeof c);
    return c;
}

Cell share(Way way, const Memory& m, const Worker& importer, cudaError_t* before_pool_export) {
    Request r{way, m.bytes, m.first, {}, {}};
    const char* failed = "";
    int fd = -1;
    if (way == legacy) {
        const cudaError_t err = export_legacy(m.shared, &r.handle, &failed);
        (void)cudaGetLastError();
        if (err != cudaSuccess) return refused(failed, cudaGetErrorName(err));
    } else if (way == pool_export && m.pool == nullptr) {  // memory of no pool: this call refuses
        failed = "cudaMemPoolExportPointer";
        const cudaError_t err = cudaMemPoolExportPointer(&r.data, m.shared);
        (void)cudaGetLastError();
        return refused(failed, cudaGetErrorName(err));
    } else if (way == pool_export) {
        // The exportable pool's block, asked for before its pool is exported: a probe.
        if (m.kind == ipc_pool) *before_pool_export = cudaMemPoolExportPointer(&r.data, m.shared);
        (void)cudaGetLastError();
        const cudaError_t err = export_from_pool(m.pool, m.shared, &fd, &r.data, &failed);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            if (fd >= 0) close(fd);
            return refused(failed, cudaGetErrorName(err));
        }
    } else {
        const CUresult err = export_vmm(m.shared, &fd, &failed);
        if (err != CUDA_SUCCESS) return refused(failed, tutorial::driver_error_name(err));
    }
    return ask(importer, r, fd);
}

// What the walkthrough found: every cell, what cudaMemPoolExportPointer said of the exportable
// pool's block before the pool itself was exported, and how the importer ended (waitpid's status).
struct Found {
    Cell cells[kinds][ways];
    cudaError_t before_pool_export = cudaSuccess;
    int status = 0;
};

// What a kind needs that a device or host may lack: the attribute that says it is missing, or "".
const char* missing_for(Kind kind, int device) {
    int value = 0;
    if (kind == host_numa_pool) {
        CUDA_CHECK(
            cudaDeviceGetAttribute(&value, cudaDevAttrHostNumaMemoryPoolsSupported, device));
        if (value != 1) return "cudaDevAttrHostNumaMemoryPoolsSupported";
        CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrHostNumaId, device));
        if (value < 0) return "cudaDevAttrHostNumaId";
    }
    if (kind == memfd_registered) {
        CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrHostRegisterSupported, device));
        if (value != 1) return "cudaDevAttrHostRegisterSupported";
    }
    return "";
}

// `self` runs this program again, in the role named after it ("share_importer" and the device).
Found walkthrough(int device, const std::vector<std::string>& self) {
    Found found{};
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    // 1. The importer: this program again.
    std::vector<std::string> command = self;
    command.insert(command.end(), {"share_importer", std::to_string(device)});
    const Worker importer = start_worker(command);
    // 2. Each kind of memory (Step 1), shared each way (Steps 2 and 3), then freed; a kind the
    //    device or host cannot make names the attribute that says so in each of its cells.
    for (int k = 0; k < kinds; ++k) {
        if (const char* missing = missing_for(static_cast<Kind>(k), device); *missing != '\0') {
            for (int w = 0; w < ways; ++w) found.cells[k][w] = refused(missing, "not-here");
            continue;
        }
        const Memory m = allocate(static_cast<Kind>(k), device, stream);
        for (int w = 0; w < ways; ++w) {
            found.cells[k][w] = share(static_cast<Way>(w), m, importer, &found.before_pool_export);
        }
        release(m, stream);
    }
    (void)cudaGetLastError();
    // 3. The importer sees end-of-file and ends.
    found.status = wait_for(importer);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
// Alone, this program is the exporter; the importer is the same program, started as
// `<program> share_importer <device>`.
int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "share_importer") {
        return importer(std::atoi(argv[2]));
    }
    const Found found = walkthrough(0, {"/proc/self/exe"});
    for (int k = 0; k < kinds; ++k) {
        std::printf("%s:\n", kind_names[k]);
        for (int w = 0; w < ways; ++w) {
            const Cell& c = found.cells[k][w];
            if (c.shared) {
                std::printf("  %-30s shared, %zu values wrong, the first %u\n", way_names[w],
                            c.wrong, c.first_value);
            } else {
                std::printf("  %-30s %s -> %s\n", way_names[w], c.call, c.error);
            }
        }
    }
    return 0;
}
#endif
