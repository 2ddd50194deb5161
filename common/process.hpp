// A second process of the same program, and a channel to it. Lessons about what crosses a process
// boundary (chapter 07: IPC handles, file descriptors, a worker that dies) start the program
// again as a worker and talk to it:
//
//   const Worker worker = start_worker({"/proc/self/exe", "importer", "0"});
//   send_all(worker.socket, &handle, sizeof handle);  // it reads read_all(STDIN_FILENO, ...)
//   send_descriptor(worker.socket, fd);               // ...and receive_descriptor(STDIN_FILENO)
//   read_all(worker.socket, &answer, sizeof answer);  // it answers send_all(STDOUT_FILENO, ...)
//   const int status = wait_for(worker);              // how it ended, as waitpid says
//
// A worker is started by fork and at once exec: a process forked from one that uses CUDA may use
// CUDA only after an exec (chapter 03). Its standard input and output are one end of a Unix
// socket pair; the master keeps the other end, close-on-exec, so no later worker inherits it.
// A worker dies with the thread that started it (Linux's PR_SET_PDEATHSIG), so a master that
// crashes or is killed leaves no worker behind: start workers from the thread that waits for them.
//
// Every call is checked. A socket pair or fork that fails ends the program (a message on stderr,
// exit code 1); a worker whose exec fails exits with code 127. Sending and reading return false
// once the other side is gone: a worker that died is an answer, not a signal that ends the master
// (send uses MSG_NOSIGNAL), and a read of 0 bytes is end-of-file.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace tutorial {

struct Worker {
    pid_t pid;
    int socket;  // the master's end of the socket pair
};

// Runs `command` (command[0] is the program's path: "/proc/self/exe" is this program) as a worker.
Worker start_worker(const std::vector<std::string>& command);

// All `bytes` over `socket` (any descriptor for read_all): false once the other side has gone.
bool send_all(int socket, const void* data, std::size_t bytes);
bool read_all(int socket, void* data, std::size_t bytes);

// One line, without its '\n', that must come within `timeout_s` seconds: false at end-of-file or
// when the time is up. It reads a byte at a time, so nothing after the line is taken.
bool read_line(int socket, std::string* line, double timeout_s);

// Closes the master's end of the socket (the worker reads end-of-file) and waits for the worker to
// end: its status as waitpid reports it (WIFEXITED and WEXITSTATUS, WIFSIGNALED and WTERMSIG).
int wait_for(const Worker& worker);

// A file descriptor over a Unix socket (SCM_RIGHTS, which no pipe can carry), with one byte of
// data: the receiver gets a descriptor of its own for the same open file (close-on-exec), or -1
// if none came.
bool send_descriptor(int socket, int fd);
int receive_descriptor(int socket);

}  // namespace tutorial
