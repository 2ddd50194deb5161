// Running part of a section in a separate process.
//
// Some lessons are about things that go wrong: an illegal address that kills the CUDA context, an
// API call that is forbidden, a fork() after CUDA was initialised. Those run in a child process so
// that the parent survives, inspects how the child ended, and prints the exact error or signal.
//
// The child is always a fresh program: we fork() and immediately exec() this same executable with
// the hidden arguments `--child ROLE ARGS...` (run_chapter dispatches them to the Chapter's
// child_roles). A fork() that is *not* followed by exec() would hand the child a copy of the
// parent's CUDA state, which the CUDA driver does not support: that mistake is itself one of the
// lessons, and this runner never makes it.
//
// Neither side can hang on the other: the parent waits with a deadline and kills the child (and
// anything it started) when it passes; the child is killed when the parent thread that started it
// dies (PR_SET_PDEATHSIG), its standard input reaches end-of-file when the parent closes it, and
// it reads that input with a deadline of its own (read_input_line), for a parent that is alive
// but stuck.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace tutorial {

// A moment in the future that several waits share: each one gets only the time that is left, so
// waiting for N children one after another takes the deadline once, not N times.
class Deadline {
public:
    explicit Deadline(double seconds);
    double seconds_left() const;  // 0 once it has passed
    int milliseconds_left() const;

private:
    std::chrono::steady_clock::time_point at_;
};

constexpr const char* child_flag = "--child";

// A descriptor the parent hands to the child (ChildProcess's `pass_descriptor`) is this one in
// the child.
constexpr int child_passed_fd = 3;

struct ChildResult {
    bool exited = false;  // ended through exit(); exit_code is valid
    int exit_code = -1;
    int signal = 0;          // the signal that ended it, when it did not exit
    bool timed_out = false;  // we killed it (SIGKILL) because the deadline passed
    bool lost = false;       // ...and it had still not ended a few seconds later (stuck in the
                             // kernel driver, say): it was left behind, never reaped
    std::string output;      // its stdout and stderr, interleaved as written

    // "exited with code 1", "died with SIGSEGV",
    // "did not finish in time and was killed", "... and was lost"
    std::string describe() const;

    bool succeeded() const { return exited && exit_code == 0; }
    // Stopped by a failed CUDA_CHECK (exit code 1) whose message names `error`, e.g.
    // "cudaErrorIllegalAddress": the documented way for a deliberate fault to end.
    bool failed_with(const std::string& error) const {
        return exited && exit_code == 1 && output.find(error) != std::string::npos;
    }
    // Ended by a signal of its own making (a crash), not by our deadline.
    bool crashed() const { return !exited && signal != 0 && !timed_out; }
};

class ChildProcess {
public:
    // Starts `<this program> --child ROLE ARGS...` with its stdin, stdout and stderr on pipes.
    // With `pass_descriptor` (an open descriptor of ours), the child also gets that open file as
    // its descriptor child_passed_fd: one end of a socket pair, for example.
    ChildProcess(const std::string& role, const std::vector<std::string>& args,
                 int pass_descriptor = -1);
    ~ChildProcess();  // a child still running is killed and reaped
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    // Writes to the child's stdin. False if the child has gone or did not read within the timeout.
    bool send(const std::string& text, double timeout_s = 10.0);
    void close_input();

    // The next line of the child's output, without the newline, while it runs. False at
    // end-of-file or when the timeout passes first. What was read here is part of wait()'s output.
    bool read_line(std::string& line, double timeout_s);

    // Closes stdin, collects output until the child closes it, then its exit status. A child still
    // running `timeout_s` seconds after the call is killed.
    ChildResult wait(double timeout_s);

    pid_t pid() const { return pid_; }

private:
    pid_t pid_ = -1;
    int input_ = -1;        // write end of the child's stdin
    int output_ = -1;       // read end of the child's stdout + stderr
    std::string received_;  // output read by read_line
};

// Collects the exit status of `pid`, a child of ours (or an orphan we adopted as a subreaper,
// PR_SET_CHILD_SUBREAPER), polling until the deadline. False if it had not ended by then.
bool reap_process(pid_t pid, int& status, const Deadline& deadline);

// How long the parent waits for a child to end after SIGKILL before it reports it as lost.
constexpr double child_reap_timeout_s = 5.0;

// Starts the child, sends `input`, and waits for it.
ChildResult run_child(const std::string& role, const std::vector<std::string>& args,
                      const std::string& input = "", double timeout_s = 30.0);

// Prints the child's output, each line prefixed with "  child| ".
void print_child_output(const ChildResult& result);

// For children that print one line per call, "<call> -> <result>": the result on the first line
// that contains `call`, or "(no line)".
std::string child_answer(const ChildResult& result, const std::string& call);

// For a child: its standard input is the parent's pipe. Both wait at most `timeout_s`, so that a
// child never waits for ever on a parent that is alive but stuck.
enum class Input { received, closed, timed_out };
Input read_input_line(std::string& line, double timeout_s);
Input read_input(void* buffer, std::size_t bytes, double timeout_s);

// The same for any pipe or socket: waits until `descriptor` can be read, and reads one line
// (without its newline) a byte at a time, so that nothing after the newline is taken from it. A
// last line that end-of-file cuts short counts as received; end-of-file before any byte, as closed.
bool wait_readable(int descriptor, const Deadline& deadline);
Input read_line_from(int descriptor, std::string& line, const Deadline& deadline);

}  // namespace tutorial
