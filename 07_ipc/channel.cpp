#include "channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using Clock = std::chrono::steady_clock;

int milliseconds_until(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

bool wait_readable(int socket, Clock::time_point deadline) {
    while (true) {
        pollfd ready{socket, POLLIN, 0};
        const int events = poll(&ready, 1, milliseconds_until(deadline));
        if (events < 0 && errno == EINTR) continue;
        return events > 0;
    }
}

Clock::time_point after(double seconds) {
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// The message that carries one descriptor: one byte of data (a message must have some) and the
// descriptor as control data.
struct DescriptorMessage {
    char byte = 'F';
    iovec data{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr header{};

    DescriptorMessage() {
        header.msg_iov = &data;
        header.msg_iovlen = 1;
        header.msg_control = control;
        header.msg_controllen = sizeof control;
    }
    DescriptorMessage(const DescriptorMessage&) = delete;
    DescriptorMessage& operator=(const DescriptorMessage&) = delete;
};

}  // namespace

Channel::Channel() {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        std::fprintf(stderr, "socketpair failed: %s\n", std::strerror(errno));
        std::exit(1);
    }
    master_ = pair[0];
    worker_ = pair[1];
}

Channel::~Channel() {
    close_worker_end();
    if (master_ >= 0) close(master_);
}

void Channel::close_worker_end() {
    if (worker_ >= 0) close(worker_);
    worker_ = -1;
}

bool send_line(int socket, const std::string& line) {
    const std::string text = line + "\n";
    std::size_t sent = 0;
    while (sent < text.size()) {
        const ssize_t n = send(socket, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        sent += static_cast<std::size_t>(n);
    }
    return true;
}

bool read_line(int socket, std::string& line, double timeout_s) {
    // One byte at a time, so that nothing after the newline (a descriptor, the next line) is
    // taken from the socket before its reader asks for it. The lines here are short.
    const auto deadline = after(timeout_s);
    line.clear();
    while (wait_readable(socket, deadline)) {
        char c = 0;
        const ssize_t n = recv(socket, &c, 1, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;  // end-of-file: the other side closed or died
        if (c == '\n') return true;
        line += c;
    }
    return false;
}

bool send_descriptor(int socket, int descriptor) {
    DescriptorMessage message;
    cmsghdr* control = CMSG_FIRSTHDR(&message.header);
    control->cmsg_level = SOL_SOCKET;
    control->cmsg_type = SCM_RIGHTS;
    control->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(control), &descriptor, sizeof(int));
    return sendmsg(socket, &message.header, MSG_NOSIGNAL) == 1;
}

int receive_descriptor(int socket, double timeout_s) {
    if (!wait_readable(socket, after(timeout_s))) return -1;
    DescriptorMessage message;
    if (recvmsg(socket, &message.header, MSG_CMSG_CLOEXEC) != 1) return -1;
    const cmsghdr* control = CMSG_FIRSTHDR(&message.header);
    if (control == nullptr || control->cmsg_type != SCM_RIGHTS) return -1;
    int descriptor = -1;
    std::memcpy(&descriptor, CMSG_DATA(control), sizeof(int));
    return descriptor;
}
