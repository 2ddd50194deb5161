// Section cross_gpu (2 or more GPUs): workers on other GPUs than the master's use its memory.
// Built alone, from the course's folder (mkdir -p build first), then ./build/cross_gpu:
//   nvcc -std=c++17 -I. 07_ipc/cross_gpu.cu common/standalone.cu -o build/cross_gpu
//   (or in 07_ipc/: nvcc -std=c++17 -I.. cross_gpu.cu ../common/standalone.cu
//       -o ../build/cross_gpu)  (on the same line)
#include <unistd.h>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/process.hpp"
#include "common/timing.hpp"  // and check.hpp's CUDA_CHECK
#include "common/vmm.hpp"
namespace {

// A legacy handle is opened on another GPU as on the same one, peer access enabled on the way;
// imported VMM memory needs a grant for the worker's GPU. Each worker reads the master's memory
// in place and copies it; the same two GPUs inside one process, with peer access, give the rates
// to compare with.

// Workers: this program started again, a Unix socket as stdin and stdout; descriptors cross it
// by SCM_RIGHTS, as in section vmm_fd (common/process.hpp).
using tutorial::Worker, tutorial::read_all, tutorial::receive_descriptor, tutorial::send_all,
    tutorial::send_descriptor, tutorial::start_worker, tutorial::wait_for;

constexpr std::uint32_t ipc_seed = 81;  // the cudaMalloc buffer holds pattern(i, ipc_seed)
constexpr std::uint32_t vmm_seed = 82;  // the cuMemCreate memory pattern(i, vmm_seed)
constexpr int runs = 5;                 // timed runs of each read and copy (medians)

// Step 1. The master, on its GPU, shares cudaMalloc memory by a legacy handle and cuMemCreate
// memory (created exportable) as a file descriptor.
struct Shared {
    std::uint32_t* ipc_buffer = nullptr;
    cudaIpcMemHandle_t handle{};
    CUmemGenericAllocationHandle vmm_memory = 0;
    CUdeviceptr vmm_address = 0;
    std::size_t bytes = 0;
    int fd = -1;
};

Shared make_shared(int master, std::size_t wanted) {
    Shared s;
    CUDA_CHECK(cudaSetDevice(master));
    const CUmemAllocationProp prop =
        tutorial::vmm_properties(master, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    s.bytes = tutorial::round_up(wanted, tutorial::vmm_granularity(prop));
    CUDA_CHECK(cudaMalloc(&s.ipc_buffer, s.bytes));
    fill_on_device(s.ipc_buffer, s.bytes / 4, ipc_seed);
    CUDA_CHECK(cudaIpcGetMemHandle(&s.handle, s.ipc_buffer));
    s.vmm_memory = tutorial::vmm_create(prop, s.bytes);
    s.vmm_address = tutorial::vmm_reserve(s.bytes, 0);
    tutorial::vmm_map(s.vmm_address, s.bytes, s.vmm_memory);
    tutorial::vmm_set_access(s.vmm_address, s.bytes, master);
    fill_on_device(reinterpret_cast<std::uint32_t*>(s.vmm_address), s.bytes / 4, vmm_seed);
    const auto cuMemExportToShareableHandle = DRIVER_FUNCTION(cuMemExportToShareableHandle);
    CU_CHECK(cuMemExportToShareableHandle(&s.fd, s.vmm_memory,
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    return s;
}

void free_shared(const Shared& s) {
    close(s.fd);
    tutorial::vmm_unmap(s.vmm_address, s.bytes);
    tutorial::vmm_release(s.vmm_memory);
    tutorial::vmm_free(s.vmm_address, s.bytes);
    CUDA_CHECK(cudaFree(s.ipc_buffer));
}

// Step 2. A worker on another GPU opens the legacy handle as on the same GPU: with
// cudaIpcMemLazyEnablePeerAccess, the open attempts to enable peer access to the master's GPU.
// The entry promises the attempt, not that it succeeds, so the worker keeps the answer and goes
// on with the descriptor if the open is refused.
cudaError_t open_from_other_gpu(const cudaIpcMemHandle_t& handle, void** data) {
    *data = nullptr;
    const cudaError_t status = cudaIpcOpenMemHandle(data, handle, cudaIpcMemLazyEnablePeerAccess);
    if (status != cudaSuccess) (void)cudaGetLastError();  // the refusal, cleared
    return status;
}

// Step 3. Imported VMM memory needs an explicit grant: the memory is on the master's GPU, and the
// access descriptor names this worker's GPU.
CUdeviceptr import_for_this_gpu(int fd, std::size_t bytes, int device) {
    const auto cuMemImportFromShareableHandle = DRIVER_FUNCTION(cuMemImportFromShareableHandle);
    CUmemGenericAllocationHandle memory = 0;
    CU_CHECK(cuMemImportFromShareableHandle(
        &memory, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    const CUdeviceptr address = tutorial::vmm_reserve(bytes, 0);
    tutorial::vmm_map(address, bytes, memory);
    tutorial::vmm_release(memory);
    tutorial::vmm_set_access(address, bytes, device);
    return address;
}

// Step 4. What the current GPU makes of memory: where it is (for device memory, the
// cudaPointerGetAttributes entry says `device` is the GPU where it resides), how fast a kernel
// reads it in place and a copy brings it into this GPU's own memory, and whether it holds the
// pattern it should.
struct Use {
    int device_named;
    double read_gbps, copy_gbps;
    std::size_t wrong;
};

Use use(const std::uint32_t* data, std::size_t count, std::uint32_t seed) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, data));
    unsigned long long* sum = nullptr;
    std::uint32_t* local = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));  // the kernel adds into it
    CUDA_CHECK(cudaMalloc(&local, count * sizeof *local));
    const double read_ms = tutorial::median_event_ms(1, runs, [&] {
        sum_on_device_async(data, count, sum, nullptr);  // a sum nobody reads: the read is timed
    });
    const double copy_ms = tutorial::median_event_ms(1, runs, [&] {
        CUDA_CHECK(cudaMemcpyAsync(local, data, count * sizeof *local, cudaMemcpyDefault, nullptr));
    });
    CUDA_CHECK(cudaFree(local));
    CUDA_CHECK(cudaFree(sum));
    return {attributes.device, tutorial::gb_per_s(count * 4, read_ms),
            tutorial::gb_per_s(count * 4, copy_ms), mismatches_on_device(data, count, seed)};
}

// The worker process on GPU `device`: the handle and the size, then the descriptor; it uses the
// master's memory both ways in and answers what it found.
struct Request {
    cudaIpcMemHandle_t handle;
    std::size_t bytes;
};

struct Answer {
    cudaError_t ipc_opened;  // what cudaIpcOpenMemHandle returned; `ipc` only where cudaSuccess
    Use ipc, vmm;
};

int cross_gpu_worker(int device) {
    CUDA_CHECK(cudaSetDevice(device));
    Request request{};
    if (!read_all(STDIN_FILENO, &request, sizeof request)) return 4;
    const int fd = receive_descriptor(STDIN_FILENO);
    if (fd < 0) return 4;
    Answer answer{};
    void* opened = nullptr;
    answer.ipc_opened = open_from_other_gpu(request.handle, &opened);
    if (answer.ipc_opened == cudaSuccess) {
        answer.ipc = use(static_cast<const std::uint32_t*>(opened), request.bytes / 4, ipc_seed);
        CUDA_CHECK(cudaIpcCloseMemHandle(opened));
    }
    const CUdeviceptr address = import_for_this_gpu(fd, request.bytes, device);
    answer.vmm = use(reinterpret_cast<const std::uint32_t*>(address), request.bytes / 4, vmm_seed);
    tutorial::vmm_unmap(address, request.bytes);
    tutorial::vmm_free(address, request.bytes);
    return send_all(STDOUT_FILENO, &answer, sizeof answer) ? 0 : 4;
}

// Step 5. For comparison, the same two GPUs inside one process: GPU `gpu` reaches the master's
// cudaMalloc memory once peer access is enabled from it.
Use in_one_process(const Shared& s, int master, int gpu) {
    CUDA_CHECK(cudaSetDevice(gpu));
    CUDA_CHECK(cudaDeviceEnablePeerAccess(master, 0));
    const Use found = use(s.ipc_buffer, s.bytes / 4, ipc_seed);
    CUDA_CHECK(cudaDeviceDisablePeerAccess(master));
    CUDA_CHECK(cudaSetDevice(master));
    return found;
}

// What the master found for each other GPU: the rates in one process, the worker's answer and
// how the worker ended (waitpid's status).
struct Found {
    std::size_t bytes = 0;
    std::vector<int> gpus;
    std::vector<Use> in_process;
    std::vector<Answer> answers;
    std::vector<bool> answered;
    std::vector<int> statuses;
};

// `self` runs this program again, in the role named after it ("cross_gpu_worker" and a GPU).
Found walkthrough(std::size_t wanted, int master, const std::vector<std::string>& self) {
    Found found;
    int gpus = 0;
    CUDA_CHECK(cudaGetDeviceCount(&gpus));
    // 1. The master, on its GPU, shares both kinds of memory (Step 1).
    const Shared s = make_shared(master, wanted);
    found.bytes = s.bytes;
    for (int g = 0; g < gpus; ++g) {
        if (g == master) continue;
        found.gpus.push_back(g);
        // 2. GPU g reaches the memory inside this process, with peer access (Step 5).
        found.in_process.push_back(in_one_process(s, master, g));
        // 3. A worker on GPU g: this program again. It gets the handle and the size, then the
        //    descriptor, and uses both ways in (Steps 2 to 4).
        std::vector<std::string> command = self;
        command.insert(command.end(), {"cross_gpu_worker", std::to_string(g)});
        const Worker worker = start_worker(command);
        const Request request{s.handle, s.bytes};
        Answer answer{};
        found.answered.push_back(send_all(worker.socket, &request, sizeof request) &&
                                 send_descriptor(worker.socket, s.fd) &&
                                 read_all(worker.socket, &answer, sizeof answer));
        found.answers.push_back(answer);
        found.statuses.push_back(wait_for(worker));
    }
    // 4. Every worker has ended: the master frees its memory.
    free_shared(s);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
// Alone, this program is the master on GPU 0 with 64 MiB of each kind; each worker is the same
// program, started as `<program> cross_gpu_worker <gpu>`.
int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "cross_gpu_worker") {
        return cross_gpu_worker(std::atoi(argv[2]));
    }
    int gpus = 0;
    CUDA_CHECK(cudaGetDeviceCount(&gpus));
    if (gpus < 2) {
        std::printf("SKIP: cross_gpu: a worker on another GPU needs 2 GPUs; this machine has %d\n",
                    gpus);
        return 77;  // as the course says a missing GPU
    }
    const Found found = walkthrough(std::size_t{64} << 20, 0, {"/proc/self/exe"});
    for (std::size_t i = 0; i < found.gpus.size(); ++i) {
        const Answer& a = found.answers[i];
        std::printf("GPU %d, one process: read %.0f GB/s, copy %.0f GB/s\n", found.gpus[i],
                    found.in_process[i].read_gbps, found.in_process[i].copy_gbps);
        if (a.ipc_opened != cudaSuccess) {
            std::printf("  its worker, legacy handle: %s\n", cudaGetErrorName(a.ipc_opened));
        } else {
            std::printf("  its worker, legacy handle: read %.0f, copy %.0f GB/s, %zu wrong\n",
                        a.ipc.read_gbps, a.ipc.copy_gbps, a.ipc.wrong);
        }
        std::printf("  its worker, descriptor: read %.0f, copy %.0f GB/s, %zu wrong\n",
                    a.vmm.read_gbps, a.vmm.copy_gbps, a.vmm.wrong);
    }
    return found.gpus.empty() ? 1 : 0;
}
#endif
