// A second channel between the master and one worker process, beside the worker's stdin and
// stdout: a Unix socket pair. It carries lines of text that the other side can wait for with a
// deadline, and open file descriptors (SCM_RIGHTS), which no pipe can carry.
//
//   Channel channel;                                             // in the master
//   tutorial::ChildProcess worker("role", args, channel.worker_end());
//   channel.close_worker_end();                                  // the worker has its own copy
//   send_descriptor(channel.master_end(), fd);
//   read_line(channel.master_end(), reply, 30.0);
//
//   // in the worker, the other end is descriptor tutorial::child_passed_fd:
//   const int fd = receive_descriptor(tutorial::child_passed_fd, 10.0);
//   send_line(tutorial::child_passed_fd, "done");
#pragma once

#include <string>

class Channel {
public:
    Channel();  // a socket pair; both ends close-on-exec, so no other child inherits them
    ~Channel();
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    int master_end() const { return master_; }
    int worker_end() const { return worker_; }
    // Once the worker has started with its copy: without this, the master would never see
    // end-of-file when the worker dies.
    void close_worker_end();

private:
    int master_ = -1;
    int worker_ = -1;
};

// A line of text (the newline is added), or the next line without it. read_line returns false at
// end-of-file or when `timeout_s` passes first.
bool send_line(int socket, const std::string& line);
bool read_line(int socket, std::string& line, double timeout_s);

// Passes an open file descriptor: the receiver gets its own descriptor for the same open file.
// receive_descriptor returns -1 on failure or timeout.
bool send_descriptor(int socket, int descriptor);
int receive_descriptor(int socket, double timeout_s);
