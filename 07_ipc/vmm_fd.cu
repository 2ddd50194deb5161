// Section vmm_fd: a VMM allocation handed to another process as a file descriptor.
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>
#include <cstring>
#include <vector>
namespace {

// The modern way to share GPU memory: memory created exportable (cuMemCreate) becomes a POSIX
// file descriptor, which another process receives over a Unix socket, imports and maps.

// A worker process: this program started again, by fork and at once exec, with one end of a Unix
// socket pair as its stdin and stdout (as in section master_workers).
struct Worker {
    pid_t pid;
    int socket;
};

Worker start_worker(const std::vector<std::string>& command) {
    int ends[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) std::exit(1);
    std::vector<char*> argv;
    for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) std::exit(1);
    if (pid == 0) {
        dup2(ends[1], STDIN_FILENO);
        dup2(ends[1], STDOUT_FILENO);
        execv(argv[0], argv.data());
        _exit(127);
    }
    close(ends[1]);
    return {pid, ends[0]};
}

bool send_all(int socket, const void* data, std::size_t bytes) {  // false: the other side is gone
    for (const char* next = static_cast<const char*>(data); bytes > 0;) {
        const ssize_t sent = send(socket, next, bytes, MSG_NOSIGNAL);
        if (sent <= 0) return false;
        next += sent;
        bytes -= static_cast<std::size_t>(sent);
    }
    return true;
}

bool read_all(int socket, void* data, std::size_t bytes) {  // false at end-of-file
    for (char* next = static_cast<char*>(data); bytes > 0;) {
        const ssize_t got = read(socket, next, bytes);
        if (got <= 0) return false;
        next += got;
        bytes -= static_cast<std::size_t>(got);
    }
    return true;
}

int wait_for(const Worker& worker) {  // how it ended, as waitpid reports it
    close(worker.socket);
    int status = 0;
    waitpid(worker.pid, &status, 0);
    return status;
}

// A descriptor over a Unix socket (SCM_RIGHTS): the receiver gets a descriptor of its own for the
// same open file. No pipe can carry one. The message carries one byte of data with it.
struct DescriptorMessage {
    char byte = 'F';
    iovec data{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr header{nullptr, 0, &data, 1, control, sizeof control, 0};
};

bool send_descriptor(int socket, int fd) {
    DescriptorMessage message;
    cmsghdr* control = CMSG_FIRSTHDR(&message.header);
    control->cmsg_level = SOL_SOCKET;
    control->cmsg_type = SCM_RIGHTS;
    control->cmsg_len = CMSG_LEN(sizeof fd);
    std::memcpy(CMSG_DATA(control), &fd, sizeof fd);
    return sendmsg(socket, &message.header, MSG_NOSIGNAL) == 1;
}

int receive_descriptor(int socket) {  // -1 if none came
    DescriptorMessage message;
    if (recvmsg(socket, &message.header, 0) != 1) return -1;
    const cmsghdr* control = CMSG_FIRSTHDR(&message.header);
    if (control == nullptr || control->cmsg_type != SCM_RIGHTS) return -1;
    int fd = -1;
    std::memcpy(&fd, CMSG_DATA(control), sizeof fd);
    return fd;
}

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
