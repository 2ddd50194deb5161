#include "common/harness/child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace tutorial {

namespace {

[[noreturn]] void fail_system_call(const char* what) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s failed: %s\n", what, std::strerror(errno));
    std::exit(1);
}

// Kills the child and everything it started (its process group). A process ends at once on
// SIGKILL unless it is in an uninterruptible wait, in the GPU driver for instance; then it is
// given up after a few seconds rather than blocking the parent for ever.
bool kill_and_reap(pid_t pid, int& status) {
    kill(-pid, SIGKILL);
    return reap_process(pid, status, Deadline(child_reap_timeout_s));
}

std::string signal_name(int signal) {
    switch (signal) {
        case SIGSEGV: return "SIGSEGV";
        case SIGABRT: return "SIGABRT";
        case SIGBUS: return "SIGBUS";
        case SIGFPE: return "SIGFPE";
        case SIGILL: return "SIGILL";
        case SIGKILL: return "SIGKILL";
        case SIGTERM: return "SIGTERM";
        case SIGPIPE: return "SIGPIPE";
        case SIGTRAP: return "SIGTRAP";
        default: return "signal " + std::to_string(signal);
    }
}

}  // namespace

Deadline::Deadline(double seconds)
    : at_(std::chrono::steady_clock::now() +
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              std::chrono::duration<double>(seconds))) {}

double Deadline::seconds_left() const {
    const double left =
        std::chrono::duration<double>(at_ - std::chrono::steady_clock::now()).count();
    return left > 0.0 ? left : 0.0;
}

int Deadline::milliseconds_left() const {
    return static_cast<int>(std::ceil(seconds_left() * 1000.0));
}

std::string ChildResult::describe() const {
    if (lost) {
        return "did not finish in time, and had not ended " +
               std::to_string(static_cast<int>(child_reap_timeout_s)) + " s after SIGKILL: lost";
    }
    if (timed_out) return "did not finish in time and was killed";
    if (exited) return "exited with code " + std::to_string(exit_code);
    return "died with " + signal_name(signal);
}

ChildProcess::ChildProcess(const std::string& role, const std::vector<std::string>& args,
                           int pass_descriptor) {
    // Everything the child needs is prepared before fork(): between fork() and exec() the child
    // may only make async-signal-safe calls (no malloc, no printf, certainly no CUDA).
    char self[4096];
    const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length < 0) fail_system_call("readlink(/proc/self/exe)");
    self[length] = '\0';
    std::vector<std::string> words = {self, child_flag, role};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);

    // O_CLOEXEC: other children started later must not inherit these pipes, or this child would
    // never see end-of-file on its stdin.
    int to_child[2];
    int from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0)
        fail_system_call("pipe2");
    std::fflush(nullptr);
    const pid_t parent = getpid();

    pid_ = fork();
    if (pid_ < 0) fail_system_call("fork");
    if (pid_ == 0) {
        setpgid(0, 0);  // its own process group, so a timeout kills whatever it started too
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
        dup2(to_child[0], STDIN_FILENO);
        dup2(from_child[1], STDOUT_FILENO);
        dup2(from_child[1], STDERR_FILENO);
        if (pass_descriptor == child_passed_fd) {
            fcntl(pass_descriptor, F_SETFD, 0);  // already in place: keep it open across exec
        } else if (pass_descriptor >= 0) {
            dup2(pass_descriptor, child_passed_fd);  // the copy is not close-on-exec
        }
        execv(argv[0], argv.data());
        const char message[] = "exec of the child failed\n";
        [[maybe_unused]] const ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
        _exit(127);
    }
    setpgid(pid_, 0);  // also here, so that kill(-pid) works even before the child's own call ran
    close(to_child[0]);
    close(from_child[1]);
    // Non-blocking, so that send() can give up on a child that stopped reading.
    fcntl(to_child[1], F_SETFL, O_NONBLOCK);
    input_ = to_child[1];
    output_ = from_child[0];
}

ChildProcess::~ChildProcess() {
    int status = 0;
    if (pid_ > 0) kill_and_reap(pid_, status);
    close_input();
    if (output_ >= 0) close(output_);
}

bool ChildProcess::send(const std::string& text, double timeout_s) {
    // Writing to a child that has exited raises SIGPIPE, which would end this process. It is
    // blocked in this thread for the write (the write then fails with EPIPE), and one that the
    // write raised is taken off again; the process's own handling of SIGPIPE is left alone.
    sigset_t pipe_signal;
    sigset_t old_mask;
    sigset_t pending;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &old_mask);
    sigpending(&pending);
    const bool was_pending = sigismember(&pending, SIGPIPE) == 1;

    const Deadline deadline(timeout_s);
    std::size_t sent = 0;
    bool broken = false;
    while (input_ >= 0 && sent < text.size()) {
        pollfd ready{input_, POLLOUT, 0};
        if (poll(&ready, 1, deadline.milliseconds_left()) <= 0) break;  // timed out
        const ssize_t n = write(input_, text.data() + sent, text.size() - sent);
        broken = n < 0 && errno != EINTR && errno != EAGAIN;  // EPIPE: the child is gone
        if (broken) break;
        if (n > 0) sent += static_cast<std::size_t>(n);
    }
    if (broken && !was_pending) {
        const timespec no_wait{0, 0};
        sigtimedwait(&pipe_signal, nullptr, &no_wait);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    return sent == text.size();
}

void ChildProcess::close_input() {
    if (input_ >= 0) close(input_);
    input_ = -1;
}

bool ChildProcess::read_line(std::string& line, double timeout_s) {
    if (output_ < 0) return false;
    const bool got = read_line_from(output_, line, Deadline(timeout_s)) == Input::received;
    received_ += line + (got ? "\n" : "");
    return got;
}

ChildResult ChildProcess::wait(double timeout_s) {
    ChildResult result;
    result.output = std::move(received_);
    close_input();
    const Deadline deadline(timeout_s);

    // Read until end-of-file, which comes when the child (and anything it started) has exited.
    char buffer[4096];
    while (output_ >= 0) {
        if (!wait_readable(output_, deadline)) {
            result.timed_out = true;
            break;
        }
        const ssize_t n = read(output_, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        result.output.append(buffer, static_cast<std::size_t>(n));
    }

    // It may have closed its output and still be running: give it until the deadline.
    int status = 0;
    if (!result.timed_out) result.timed_out = !reap_process(pid_, status, deadline);
    if (result.timed_out) result.lost = !kill_and_reap(pid_, status);
    pid_ = -1;
    if (result.lost) return result;

    if (WIFEXITED(status)) {
        result.exited = true;
        result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.signal = WTERMSIG(status);
    }
    return result;
}

ChildResult run_child(const std::string& role, const std::vector<std::string>& args,
                      const std::string& input, double timeout_s) {
    ChildProcess child(role, args);
    if (!input.empty()) child.send(input, timeout_s);
    return child.wait(timeout_s);
}

bool reap_process(pid_t pid, int& status, const Deadline& deadline) {
    while (true) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) return true;
        if (done < 0 && errno != EINTR) fail_system_call("waitpid");
        if (deadline.milliseconds_left() == 0) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

// Waits until `descriptor` can be read or the deadline passes.
bool wait_readable(int descriptor, const Deadline& deadline) {
    while (true) {
        pollfd ready{descriptor, POLLIN, 0};
        const int events = poll(&ready, 1, deadline.milliseconds_left());
        if (events < 0 && errno == EINTR) continue;
        return events > 0;
    }
}

// One line from `descriptor`, a byte at a time so that nothing after the newline is taken.
Input read_line_from(int descriptor, std::string& line, const Deadline& deadline) {
    line.clear();
    while (wait_readable(descriptor, deadline)) {
        char c = 0;
        const ssize_t n = read(descriptor, &c, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return line.empty() ? Input::closed : Input::received;  // a last line
        if (c == '\n') return Input::received;
        line += c;
    }
    return Input::timed_out;
}

Input read_input_line(std::string& line, double timeout_s) {
    return read_line_from(STDIN_FILENO, line, Deadline(timeout_s));
}

Input read_input(void* buffer, std::size_t bytes, double timeout_s) {
    const Deadline deadline(timeout_s);
    auto* into = static_cast<char*>(buffer);
    std::size_t got = 0;
    while (got < bytes) {
        if (!wait_readable(STDIN_FILENO, deadline)) return Input::timed_out;
        const ssize_t n = read(STDIN_FILENO, into + got, bytes - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return Input::closed;
        got += static_cast<std::size_t>(n);
    }
    return Input::received;
}

std::string child_answer(const ChildResult& result, const std::string& call) {
    const std::string& output = result.output;
    const std::size_t line = output.find(call);
    if (line == std::string::npos) return "(no line)";
    // After the call's name: a name may hold an arrow of its own ("device -> device as ...").
    const std::size_t arrow = output.find("-> ", line + call.size());
    const std::size_t end = output.find('\n', arrow);
    if (arrow == std::string::npos || arrow > output.find('\n', line)) return "(no answer)";
    return output.substr(arrow + 3, end == std::string::npos ? end : end - arrow - 3);
}

void print_child_output(const ChildResult& result) {
    std::size_t start = 0;
    while (start < result.output.size()) {
        std::size_t end = result.output.find('\n', start);
        if (end == std::string::npos) end = result.output.size();
        std::printf("  child| %.*s\n", static_cast<int>(end - start), result.output.data() + start);
        start = end + 1;
    }
}

}  // namespace tutorial
