// Section vmm_fd: a VMM allocation handed to another process as a file descriptor.
// Built alone, from the course's folder (mkdir -p build first), then ./build/vmm_fd:
//   nvcc -std=c++17 -I. 07_ipc/vmm_fd.cu common/standalone.cu -o build/vmm_fd
//   (or in 07_ipc/: nvcc -std=c++17 -I.. vmm_fd.cu ../common/standalone.cu -o ../build/vmm_fd)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/process.hpp"
#include "common/vmm.hpp"
#include <unistd.h>
#include <cstdint>
#include <cstdlib>
#include <vector>
namespace {

// The modern way to share GPU memory: memory created exportable (cuMemCreate) becomes a POSIX
// file descriptor, which another process receives over a Unix socket, imports and maps.

// The importer is this program started again (common/process.hpp, as in section master_workers).
// A descriptor crosses their socket as SCM_RIGHTS (send_descriptor, receive_descriptor): the
// receiver gets a descriptor of its own for the same open file. No pipe can carry one.
using tutorial::Worker, tutorial::read_all, tutorial::receive_descriptor, tutorial::send_all,
    tutorial::send_descriptor, tutorial::start_worker, tutorial::wait_for;

constexpr std::uint32_t fd_seed = 61;  // the exporter's data: pattern(i, fd_seed)

// The exporter: memory that may be exported must say so when it is created
// (requestedHandleTypes).
CUmemGenericAllocationHandle create_exportable(int device, std::size_t bytes) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemGenericAllocationHandle memory = 0;
    CU_CHECK(cuMemCreate(&memory, bytes, &prop, 0));
    return memory;
}

// Each process maps the allocation at addresses of its own and gives its GPU access, as for any
// VMM memory (chapter 06).
CUdeviceptr map_here(CUmemGenericAllocationHandle memory, std::size_t bytes, int device) {
    const CUdeviceptr address = tutorial::vmm_reserve(bytes, 0);
    tutorial::vmm_map(address, bytes, memory);
    tutorial::vmm_set_access(address, bytes, device);
    return address;
}

// The exporter turns the allocation into a file descriptor of its own process.
int export_fd(CUmemGenericAllocationHandle memory) {
    const auto cuMemExportToShareableHandle = DRIVER_FUNCTION(cuMemExportToShareableHandle);
    int fd = -1;
    CU_CHECK(
        cuMemExportToShareableHandle(&fd, memory, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    return fd;
}

// The importer: the descriptor stands for the physical memory; importing it gives this process a
// handle to the same allocation, which it maps. The mapping keeps the memory, so neither the
// descriptor nor the handle is needed after that.
CUdeviceptr import_and_map(int fd, std::size_t bytes, int device) {
    const auto cuMemImportFromShareableHandle = DRIVER_FUNCTION(cuMemImportFromShareableHandle);
    CUmemGenericAllocationHandle memory = 0;
    CU_CHECK(cuMemImportFromShareableHandle(
        &memory, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    const CUdeviceptr address = map_here(memory, bytes, device);
    tutorial::vmm_release(memory);
    return address;
}

__global__ void two_x_plus_one(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = 2 * data[i] + 1;
    }
}

// The importer process: the size, then the descriptor; it imports and maps the memory, counts
// the values that are not the exporter's, changes every one in place (2 * x + 1), lets go of the
// mapping and answers the count.
int fd_importer(int device) {
    CUDA_CHECK(cudaSetDevice(device));
    std::size_t bytes = 0;
    if (!read_all(STDIN_FILENO, &bytes, sizeof bytes)) return 4;
    const int fd = receive_descriptor(STDIN_FILENO);
    if (fd < 0) return 4;
    const CUdeviceptr address = import_and_map(fd, bytes, device);
    auto* data = reinterpret_cast<std::uint32_t*>(address);
    const std::size_t wrong = mismatches_on_device(data, bytes / 4, fd_seed);
    two_x_plus_one<<<512, 256>>>(data, bytes / 4);
    CUDA_CHECK_LAUNCH_SYNC();
    tutorial::vmm_unmap(address, bytes);
    tutorial::vmm_free(address, bytes);
    return send_all(STDOUT_FILENO, &wrong, sizeof wrong) ? 0 : 4;
}

// What the exporter found: the descriptor it sent and the importer's answer (the values wrong
// there), how the importer ended (waitpid's status), and the values of its own mapping that are
// not 2 * x + 1 afterwards.
struct Found {
    int fd = -1;
    bool answered = false;
    std::size_t importer_wrong = 0;
    int status = 0;
    std::size_t wrong = 0;
};

// `self` runs this program again, in the role named after it ("fd_importer" and the device).
Found walkthrough(std::size_t bytes, int device, const std::vector<std::string>& self) {
    Found found;
    // 1. The exporter creates memory that may be exported, maps it and fills it.
    const CUmemGenericAllocationHandle memory = create_exportable(device, bytes);
    const CUdeviceptr address = map_here(memory, bytes, device);
    auto* data = reinterpret_cast<std::uint32_t*>(address);
    fill_on_device(data, bytes / 4, fd_seed);
    // 2. It exports the allocation as a file descriptor.
    found.fd = export_fd(memory);
    // 3. The importer: this program again. The exporter sends it the size, then the descriptor
    //    over their Unix socket; its own copy is not needed after that.
    std::vector<std::string> command = self;
    command.insert(command.end(), {"fd_importer", std::to_string(device)});
    const Worker importer = start_worker(command);
    const bool sent = send_all(importer.socket, &bytes, sizeof bytes) &&
                      send_descriptor(importer.socket, found.fd);
    close(found.fd);
    // 4. The importer imports and maps the memory, checks it and changes it in place; the
    //    exporter waits for its answer and its end.
    found.answered = sent && read_all(importer.socket, &found.importer_wrong, sizeof(std::size_t));
    found.status = wait_for(importer);
    // 5. The change shows in the exporter's own mapping: one allocation, two processes.
    found.wrong = mismatches_on_device(data, bytes / 4, fd_seed, {2, 1});
    tutorial::vmm_unmap(address, bytes);
    tutorial::vmm_release(memory);
    tutorial::vmm_free(address, bytes);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
// Alone, this program exports 16 MiB; the importer is the same program, started as
// `<program> fd_importer <device>`.
int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "fd_importer") return fd_importer(std::atoi(argv[2]));
    const CUmemAllocationProp prop = tutorial::vmm_properties(0);
    const std::size_t bytes = tutorial::round_up(16 << 20, tutorial::vmm_granularity(prop));
    const Found found = walkthrough(bytes, 0, {"/proc/self/exe"});
    std::printf(
        "descriptor %d sent; the importer %s, %zu values wrong there; back in the "
        "exporter, %zu values are not 2 * x + 1\n",
        found.fd, found.answered ? "answered" : "did not answer", found.importer_wrong,
        found.wrong);
    return found.answered && found.importer_wrong == 0 && found.wrong == 0 ? 0 : 1;
}
#endif
