// Section host_shared: pinned host memory that a second process reads and writes in place.
// Built alone, from the course's folder (mkdir -p build first), then ./build/host_shared:
//   nvcc -std=c++17 -I. 07_ipc/host_shared.cu common/standalone.cu -o build/host_shared
//   (or in 07_ipc/: nvcc -std=c++17 -I.. host_shared.cu ../common/standalone.cu
//       -o ../build/host_shared)  (on the same line)
#include <sys/mman.h>
#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/process.hpp"
#include "common/timing.hpp"
namespace {

// Two processes that pass pinned host memory back and forth (a loader and its GPU workers, the
// ranks of one machine) want the same bytes in both, with no copy. cudaHostAlloc memory belongs
// to its process: no CUDA IPC call takes it, so the other process gets a copy. A pool of host
// memory at no particular NUMA node is refused a handle type; a pool on one host NUMA node is
// not, and is exported like a pool of device memory. Without CUDA's IPC, the operating system
// shares a file's pages (memfd_create), and each process pins its own mapping of them.

// The worker is this program started again (common/process.hpp, as in section vmm_fd): its
// stdin and stdout are a Unix socket, over which descriptors cross (SCM_RIGHTS).
using tutorial::Worker, tutorial::read_all, tutorial::receive_descriptor, tutorial::send_all,
    tutorial::send_descriptor, tutorial::start_worker, tutorial::wait_for;

constexpr std::uint32_t seed = 67;  // what the parent writes: pattern(i, seed)

// The three ways, in the order the walkthrough meets them.
enum Way { copied, numa_pool, memfd, ways };
const char* const way_names[ways] = {"cudaHostAlloc, copied through the socket",
                                     "HostNuma pool, exported", "memfd, registered in each"};

// What the parent sends first; after it, the pool's or the file's descriptor, or (copied) the
// bytes themselves.
struct Request {
    Way way;
    std::size_t bytes;
    cudaMemPoolPtrExportData block;  // the pool's way: the block's export data
};

// The worker's first answer, once its GPU has read the memory and its kernel has written it:
struct GpuSide {
    std::size_t kernel_wrong;   // values its kernel read that are not the parent's
    double copy_gbps;           // its copies of the memory to its GPU (median of 5)
    double socket_gbps;         // copied: the bytes through the socket
    cudaMemAccessFlags before;  // the pool's way: its GPU's access before it granted any
};
// ...and its second, once its CPU has read the same bytes and it has let go of them:
struct CpuSide {
    std::size_t cpu_wrong;  // values its CPU read that are not 2 * x + 1
};

// One way, seen from the parent: the worker's answers, the parent's own values afterwards, and
// how the worker ended (waitpid's status).
struct Shared {
    bool gpu_answered = false;
    bool cpu_answered = false;
    GpuSide gpu{};
    CpuSide cpu{};
    std::size_t parent_not_written = 0;   // the parent's values that are not 2 * x + 1
    std::size_t parent_not_original = 0;  // the parent's values that are not its own any more
    int status = 0;
};

// What the walkthrough found.
struct Found {
    cudaError_t legacy_handle = cudaSuccess;  // cudaIpcGetMemHandle of cudaHostAlloc memory
    cudaError_t host_pool = cudaSuccess;      // cudaMemPoolCreate at cudaMemLocationTypeHost
    int numa_id = -1;                         // cudaDevAttrHostNumaId: -1, the host has no NUMA
    Shared way[ways]{};
};

// Below the walkthrough: the parent's side of each way, and the worker.
cudaError_t shareable_pool_at_no_node();
cudaMemPool_t shareable_pool_on_node(int numa_id);
Shared share_pool_block(cudaMemPool_t pool, std::size_t bytes,
                        const std::vector<std::string>& worker);
std::uint32_t* shared_file(std::size_t bytes, int* fd);
Shared share_with_worker(const Request& r, int fd, const std::uint32_t* data,
                         const std::vector<std::string>& worker);

// `self` runs this program again, in the role named after it ("host_worker" and the device).
Found walkthrough(std::size_t bytes, int device, const std::vector<std::string>& self) {
    Found found;
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::vector<std::string> worker = self;
    worker.insert(worker.end(), {"host_worker", std::to_string(device)});
    // 1. Pinned memory as most programs have it: cudaHostAlloc, mapped for kernels, portable to
    //    every context of this process. The legacy handle is for cudaMalloc's device memory
    //    (a refusal is an answer here); no other IPC call takes it. The worker gets a copy.
    std::uint32_t* own = nullptr;
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&own), bytes,
                             cudaHostAllocPortable | cudaHostAllocMapped));
    fill_on_host(own, count, seed);
    cudaIpcMemHandle_t handle{};
    found.legacy_handle = cudaIpcGetMemHandle(&handle, own);
    (void)cudaGetLastError();
    found.way[copied] = share_with_worker({copied, bytes, {}}, -1, own, worker);
    CUDA_CHECK(cudaFreeHost(own));
    // 2. A pool of pinned host memory at no particular NUMA node, asked for a handle type.
    found.host_pool = shareable_pool_at_no_node();
    // 3. The host NUMA node nearest the GPU. A pool there may have a handle type: its block,
    //    filled by the CPU, crosses as the pool's descriptor and the block's export data.
    CUDA_CHECK(cudaDeviceGetAttribute(&found.numa_id, cudaDevAttrHostNumaId, device));
    if (found.numa_id >= 0) {
        const cudaMemPool_t pool = shareable_pool_on_node(found.numa_id);
        found.way[numa_pool] = share_pool_block(pool, bytes, worker);
        CUDA_CHECK(cudaMemPoolDestroy(pool));
    }
    // 4. Without CUDA's IPC: an anonymous file's pages, mapped shared and pinned here; the
    //    worker maps the same file from its descriptor and pins its own mapping.
    int fd = -1;
    std::uint32_t* file = shared_file(bytes, &fd);
    fill_on_host(file, count, seed);
    found.way[memfd] = share_with_worker({memfd, bytes, {}}, fd, file, worker);
    close(fd);
    CUDA_CHECK(cudaHostUnregister(file));
    munmap(file, bytes);
    return found;
}

// A failed system call ends the lesson with its reason (these are not what it teaches).
void system_call(bool ok, const char* what) {
    if (ok) return;
    std::perror(what);  // "what: the reason"
    std::exit(1);
}

void* map_shared(int fd, std::size_t bytes) {
    void* at = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    system_call(at != MAP_FAILED, "mmap");
    return at;
}

// Step 2. The pool at cudaMemLocationTypeHost: its entry says such pools are not IPC capable,
// and refuses any handle type. Returns what cudaMemPoolCreate said.
cudaError_t shareable_pool_at_no_node() {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;  // asks to be shareable...
    props.location.type = cudaMemLocationTypeHost;             // ...at no particular node
    props.location.id = 0;                                     // (ignored for this type)
    cudaMemPool_t pool = nullptr;
    const cudaError_t status = cudaMemPoolCreate(&pool, &props);
    if (status == cudaSuccess) CUDA_CHECK(cudaMemPoolDestroy(pool));  // a driver that allows it
    (void)cudaGetLastError();
    return status;
}

// Step 3. The same pool on one host NUMA node: cudaMemPoolCreate takes the handle type.
cudaMemPool_t shareable_pool_on_node(int numa_id) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    props.location.type = cudaMemLocationTypeHostNuma;
    props.location.id = numa_id;
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    return pool;
}

// The parent's side of the pool: a block in stream order, the CPU's to fill at once (a host
// pool's memory is the CPU's by default); the pool exported first, then the block (the export
// data is for blocks of a pool already shared). The worker frees its import before its second
// answer; the parent frees the block only after that.
Shared share_pool_block(cudaMemPool_t pool, std::size_t bytes,
                        const std::vector<std::string>& worker) {
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::uint32_t* block = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&block), bytes, pool, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));  // the worker may use the block once it exists
    fill_on_host(block, bytes / sizeof(std::uint32_t), seed);
    int fd = -1;
    CUDA_CHECK(
        cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
    Request r{numa_pool, bytes, {}};
    CUDA_CHECK(cudaMemPoolExportPointer(&r.block, block));
    const Shared s = share_with_worker(r, fd, block, worker);
    close(fd);
    CUDA_CHECK(cudaFreeAsync(block, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return s;
}

// Step 4. The parent's side of the file: memfd_create gives a file with no name, which lives as
// long as a descriptor or a mapping does; MAP_SHARED makes the mapping its pages, not a copy.
// cudaHostRegister pins this process's mapping of them.
std::uint32_t* shared_file(std::size_t bytes, int* fd) {
    *fd = memfd_create("host_shared", MFD_CLOEXEC);
    system_call(*fd >= 0, "memfd_create");
    system_call(ftruncate(*fd, static_cast<off_t>(bytes)) == 0, "ftruncate");
    void* data = map_shared(*fd, bytes);
    CUDA_CHECK(cudaHostRegister(data, bytes, cudaHostRegisterMapped));
    return static_cast<std::uint32_t*>(data);
}

// The values of `data` that are not 2 * x + 1 of the parent's, counted by the CPU.
std::size_t not_written(const std::uint32_t* data, std::size_t count) {
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) wrong += data[i] != 2 * pattern(i, seed) + 1;
    return wrong;
}

// Every way, from the parent: the worker, the request, then the descriptor or the bytes. After
// the worker's first answer its kernel has written the memory: the parent's CPU reads its own
// values. Then the second answer, and the worker's end.
Shared share_with_worker(const Request& r, int fd, const std::uint32_t* data,
                         const std::vector<std::string>& worker) {
    Shared s;
    const std::size_t count = r.bytes / sizeof(std::uint32_t);
    const Worker w = start_worker(worker);
    bool sent = send_all(w.socket, &r, sizeof r);
    if (fd >= 0) sent = sent && send_descriptor(w.socket, fd);
    if (r.way == copied) sent = sent && send_all(w.socket, data, r.bytes);
    s.gpu_answered = sent && read_all(w.socket, &s.gpu, sizeof s.gpu);
    s.parent_not_written = not_written(data, count);
    s.parent_not_original = mismatches_on_host(data, count, seed);
    s.cpu_answered = s.gpu_answered && read_all(w.socket, &s.cpu, sizeof s.cpu);
    s.status = wait_for(w);
    return s;
}

// The worker's side. What it reached: the address its CPU uses, the one its kernels use, and
// the imported pool (the pool's way).
struct Reached {
    std::uint32_t* host = nullptr;
    std::uint32_t* device = nullptr;
    cudaMemPool_t pool = nullptr;
};

// The pool's way: the pool from its descriptor; this process's GPU granted access (the pool's
// memory is the CPU's by default), after asking what it had; then the block from its export
// data. Its one address serves the CPU and kernels here as in the exporter (no entry says the
// CPU may use it in the importer: the chapter's checks show whether it can).
Reached import_pool_block(int fd, Request& r, int device, cudaMemAccessFlags* before) {
    Reached m;
    CUDA_CHECK(cudaMemPoolImportFromShareableHandle(
        &m.pool, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
        cudaMemHandleTypePosixFileDescriptor, 0));
    close(fd);  // the imported pool keeps what it needs
    cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    CUDA_CHECK(cudaMemPoolGetAccess(before, m.pool, &gpu));
    const cudaMemAccessDesc grant{gpu, cudaMemAccessFlagsProtReadWrite};
    CUDA_CHECK(cudaMemPoolSetAccess(m.pool, &grant, 1));
    void* block = nullptr;
    CUDA_CHECK(cudaMemPoolImportPointer(&block, m.pool, &r.block));
    m.host = m.device = static_cast<std::uint32_t*>(block);
    return m;
}

// The file's way: the same file mapped shared here too, and this mapping pinned; its kernels use
// the device pointer cudaHostGetDevicePointer gives for it.
Reached map_and_register(int fd, std::size_t bytes) {
    Reached m;
    m.host = static_cast<std::uint32_t*>(map_shared(fd, bytes));
    close(fd);  // the mapping keeps the file
    CUDA_CHECK(cudaHostRegister(m.host, bytes, cudaHostRegisterMapped));
    void* device = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&device, m.host, 0));
    m.device = static_cast<std::uint32_t*>(device);
    return m;
}

// The copy: pinned memory of the worker's own, filled from the socket (timed: the copy's cost).
Reached receive_copy(std::size_t bytes, double* socket_gbps) {
    Reached m;
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&m.host), bytes,
                             cudaHostAllocPortable | cudaHostAllocMapped));
    tutorial::HostTimer timer;
    if (!read_all(STDIN_FILENO, m.host, bytes)) return m;
    *socket_gbps = tutorial::gb_per_s(bytes, timer.elapsed_ms());
    void* device = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&device, m.host, 0));
    m.device = static_cast<std::uint32_t*>(device);
    return m;
}

void let_go(Way way, const Reached& m, std::size_t bytes) {
    if (way == numa_pool) CUDA_CHECK(cudaFree(m.host));  // the importer frees first
    if (way == numa_pool) CUDA_CHECK(cudaMemPoolDestroy(m.pool));
    if (way == memfd) CUDA_CHECK(cudaHostUnregister(m.host));
    if (way == memfd) munmap(m.host, bytes);
    if (way == copied) CUDA_CHECK(cudaFreeHost(m.host));
}

// What a copy of the memory to the worker's GPU runs at: the median of 5 (1 GB = 1e9 bytes).
double copy_rate(const std::uint32_t* host, std::size_t bytes) {
    void* on_gpu = nullptr;
    CUDA_CHECK(cudaMalloc(&on_gpu, bytes));
    const double ms = tutorial::median_event_ms(
        1, 5, [&] { CUDA_CHECK(cudaMemcpyAsync(on_gpu, host, bytes, cudaMemcpyHostToDevice, 0)); });
    CUDA_CHECK(cudaFree(on_gpu));
    return tutorial::gb_per_s(bytes, ms);
}

__global__ void two_x_plus_one(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = 2 * data[i] + 1;
    }
}

// The worker process: the request, then the memory reached its way. Its kernel counts the values
// that are not the parent's, its GPU copies the memory, its kernel writes 2 * x + 1 in place; it
// answers. Then its CPU reads the same bytes, it lets go of them, and it answers again.
int host_worker(int device) {
    CUDA_CHECK(cudaSetDevice(device));
    Request r{};
    if (!read_all(STDIN_FILENO, &r, sizeof r) || r.way < 0 || r.way >= ways) return 4;
    const int fd = r.way == copied ? -1 : receive_descriptor(STDIN_FILENO);
    if (r.way != copied && fd < 0) return 4;
    const std::size_t count = r.bytes / sizeof(std::uint32_t);
    GpuSide gpu{0, 0.0, 0.0, cudaMemAccessFlagsProtNone};
    const Reached m = r.way == numa_pool ? import_pool_block(fd, r, device, &gpu.before)
                      : r.way == memfd   ? map_and_register(fd, r.bytes)
                                         : receive_copy(r.bytes, &gpu.socket_gbps);
    if (m.device == nullptr) return 4;
    gpu.kernel_wrong = mismatches_on_device(m.device, count, seed);
    gpu.copy_gbps = copy_rate(m.host, r.bytes);
    two_x_plus_one<<<512, 256>>>(m.device, count);
    CUDA_CHECK_LAUNCH_SYNC();
    if (!send_all(STDOUT_FILENO, &gpu, sizeof gpu)) return 4;
    const CpuSide cpu{not_written(m.host, count)};
    let_go(r.way, m, r.bytes);
    return send_all(STDOUT_FILENO, &cpu, sizeof cpu) ? 0 : 4;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
// Alone, this program is the parent and shares 64 MiB each way; the worker is the same program,
// started as `<program> host_worker <device>`.
int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "host_worker") return host_worker(std::atoi(argv[2]));
    int numa_pools = 0, handle_types = 0, numa_id = -1;
    CUDA_CHECK(cudaDeviceGetAttribute(&numa_pools, cudaDevAttrHostNumaMemoryPoolsSupported, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&handle_types, cudaDevAttrMemoryPoolSupportedHandleTypes, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&numa_id, cudaDevAttrHostNumaId, 0));
    if (numa_pools != 1 || (handle_types & cudaMemHandleTypePosixFileDescriptor) == 0 ||
        numa_id < 0) {  // as the course says a missing capability
        std::printf(
            "SKIP: host_shared: no shareable pool of host NUMA memory here "
            "(hostNumaMemoryPoolsSupported = %d, POSIX fd handles %s, hostNumaId = %d)\n",
            numa_pools, (handle_types & cudaMemHandleTypePosixFileDescriptor) ? "yes" : "no",
            numa_id);
        return 77;
    }
    const std::size_t bytes = std::size_t{64} << 20;
    const Found found = walkthrough(bytes, 0, {"/proc/self/exe"});
    std::printf("cudaIpcGetMemHandle(cudaHostAlloc memory) -> %s\n",
                cudaGetErrorName(found.legacy_handle));
    std::printf("cudaMemPoolCreate(cudaMemLocationTypeHost, POSIX fd handle type) -> %s\n",
                cudaGetErrorName(found.host_pool));
    bool right = true;
    for (int w = 0; w < ways; ++w) {
        const Shared& s = found.way[w];
        if (w == numa_pool && found.numa_id < 0) {
            std::printf("%-40s not tried: the host has no NUMA node id for this GPU\n",
                        way_names[w]);
            continue;
        }
        const bool shared = w != copied;
        std::printf(
            "%-40s worker's GPU copies %.1f GB/s, %zu values wrong in its kernel, %s "
            "on its CPU; its write shows in %zu of %zu of the parent's values\n",
            way_names[w], s.gpu.copy_gbps, s.gpu.kernel_wrong,
            s.cpu_answered ? std::to_string(s.cpu.cpu_wrong).c_str() : "(no answer)",
            bytes / 4 - s.parent_not_written, bytes / 4);
        right = right && s.gpu_answered && s.gpu.kernel_wrong == 0 &&
                (shared ? s.parent_not_written == 0 : s.parent_not_original == 0);
    }
    std::printf("the copy through the socket: %.2f GB/s\n", found.way[copied].gpu.socket_gbps);
    return right ? 0 : 1;
}
#endif
