#include "channel.hpp"

#include "common/harness/child.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using tutorial::Deadline;

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
    // A byte at a time, so that nothing after the newline (a descriptor, the next line) is taken
    // from the socket before its reader asks for it.
    return tutorial::read_line_from(socket, line, Deadline(timeout_s)) == tutorial::Input::received;
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
    if (!tutorial::wait_readable(socket, Deadline(timeout_s))) return -1;
    DescriptorMessage message;
    if (recvmsg(socket, &message.header, MSG_CMSG_CLOEXEC) != 1) return -1;
    const cmsghdr* control = CMSG_FIRSTHDR(&message.header);
    if (control == nullptr || control->cmsg_type != SCM_RIGHTS) return -1;
    int descriptor = -1;
    std::memcpy(&descriptor, CMSG_DATA(control), sizeof(int));
    return descriptor;
}
