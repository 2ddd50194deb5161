#include "common/process.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>  // waitpid, and (with <signal.h>, which it brings) SIGKILL
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tutorial {
namespace {

[[noreturn]] void fail(const char* call) {
    const int error = errno;
    std::fflush(stdout);  // keep the program's earlier output ahead of the error line
    std::fprintf(stderr, "common/process.cpp: %s failed: %s\n", call, std::strerror(error));
    std::exit(1);
}

// The new process, between fork and exec: only calls that are safe after a fork in a program
// with threads (the CUDA runtime starts some). Any failure ends it with code 127, as a failed
// exec does.
[[noreturn]] void become_worker(int end, pid_t parent, char* const* argv) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(127);
    if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
    if (dup2(end, STDIN_FILENO) < 0 || dup2(end, STDOUT_FILENO) < 0) _exit(127);
    execv(argv[0], argv);  // the socket pair's own descriptors close here (close-on-exec)
    _exit(127);
}

}  // namespace

Worker start_worker(const std::vector<std::string>& command) {
    if (command.empty()) {
        std::fprintf(stderr, "common/process.cpp: start_worker: no command\n");
        std::exit(1);
    }
    std::vector<char*> argv;
    for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
    argv.push_back(nullptr);
    int ends[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) fail("socketpair");
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) fail("fork");
    if (pid == 0) become_worker(ends[1], parent, argv.data());
    if (close(ends[1]) != 0) fail("close");
    return {pid, ends[0]};
}

bool send_all(int socket, const void* data, std::size_t bytes) {
    for (const char* next = static_cast<const char*>(data); bytes > 0;) {
        const ssize_t sent = send(socket, next, bytes, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) return false;
        next += sent;
        bytes -= static_cast<std::size_t>(sent);
    }
    return true;
}

bool read_all(int socket, void* data, std::size_t bytes) {
    for (char* next = static_cast<char*>(data); bytes > 0;) {
        const ssize_t got = read(socket, next, bytes);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;  // 0: end-of-file, the other side has gone
        next += got;
        bytes -= static_cast<std::size_t>(got);
    }
    return true;
}

bool read_line(int socket, std::string* line, double timeout_s) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::milliseconds(long(timeout_s * 1000));
    line->clear();
    while (true) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        pollfd ready{socket, POLLIN, 0};
        const int polled = left.count() > 0 ? poll(&ready, 1, static_cast<int>(left.count())) : 0;
        if (polled < 0 && errno == EINTR) continue;
        if (polled <= 0) return false;  // the time is up (or poll failed)
        char c = 0;
        const ssize_t got = read(socket, &c, 1);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        if (c == '\n') return true;
        *line += c;
    }
}

int wait_for(const Worker& worker) {
    if (close(worker.socket) != 0) fail("close");
    int status = 0;
    while (waitpid(worker.pid, &status, 0) < 0) {
        if (errno != EINTR) fail("waitpid");
    }
    return status;
}

namespace {

// One byte of data, and room for one descriptor beside it.
struct DescriptorMessage {
    char byte = 'F';
    iovec data{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr header{nullptr, 0, &data, 1, control, sizeof control, 0};
};

}  // namespace

bool send_descriptor(int socket, int fd) {
    DescriptorMessage message;
    cmsghdr* control = CMSG_FIRSTHDR(&message.header);
    control->cmsg_level = SOL_SOCKET;
    control->cmsg_type = SCM_RIGHTS;
    control->cmsg_len = CMSG_LEN(sizeof fd);
    std::memcpy(CMSG_DATA(control), &fd, sizeof fd);
    ssize_t sent = 0;
    while ((sent = sendmsg(socket, &message.header, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    return sent == 1;
}

int receive_descriptor(int socket) {
    DescriptorMessage message;
    ssize_t got = 0;
    while ((got = recvmsg(socket, &message.header, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (got != 1 || (message.header.msg_flags & MSG_CTRUNC) != 0) return -1;
    const cmsghdr* control = CMSG_FIRSTHDR(&message.header);
    if (control == nullptr || control->cmsg_level != SOL_SOCKET ||
        control->cmsg_type != SCM_RIGHTS || control->cmsg_len != CMSG_LEN(sizeof(int))) {
        return -1;
    }
    int fd = -1;
    std::memcpy(&fd, CMSG_DATA(control), sizeof fd);
    return fd;
}

}  // namespace tutorial
