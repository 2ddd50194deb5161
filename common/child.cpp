#include "common/child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
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

using Clock = std::chrono::steady_clock;

int milliseconds_left(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

Clock::time_point deadline_after(double seconds) {
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
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

std::string ChildResult::describe() const {
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
    // Writing to a child that has exited must come back as an error, not kill us with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    std::fflush(nullptr);
    const pid_t parent = getpid();

    pid_ = fork();
    if (pid_ < 0) fail_system_call("fork");
    if (pid_ == 0) {
        setpgid(0, 0);  // its own process group, so a timeout kills whatever it started too
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
        std::signal(SIGPIPE, SIG_DFL);        // ignored signals survive exec(); restore the default
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
    if (pid_ > 0) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    close_input();
    if (output_ >= 0) close(output_);
}

bool ChildProcess::send(const std::string& text, double timeout_s) {
    const auto deadline = deadline_after(timeout_s);
    std::size_t sent = 0;
    while (input_ >= 0 && sent < text.size()) {
        pollfd ready{input_, POLLOUT, 0};
        if (poll(&ready, 1, milliseconds_left(deadline)) <= 0) return false;  // timed out
        const ssize_t n = write(input_, text.data() + sent, text.size() - sent);
        if (n < 0 && errno != EINTR && errno != EAGAIN) return false;  // EPIPE: the child is gone
        if (n > 0) sent += static_cast<std::size_t>(n);
    }
    return sent == text.size();
}

void ChildProcess::close_input() {
    if (input_ >= 0) close(input_);
    input_ = -1;
}

ChildResult ChildProcess::wait(double timeout_s) {
    ChildResult result;
    close_input();
    const auto deadline = deadline_after(timeout_s);

    // Read until end-of-file, which comes when the child (and anything it started) has exited.
    char buffer[4096];
    while (output_ >= 0 && !result.timed_out) {
        pollfd ready{output_, POLLIN, 0};
        const int events = poll(&ready, 1, milliseconds_left(deadline));
        if (events < 0 && errno == EINTR) continue;
        if (events <= 0) {
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
    while (!result.timed_out) {
        const pid_t done = waitpid(pid_, &status, WNOHANG);
        if (done == pid_) break;
        if (done < 0 && errno != EINTR) fail_system_call("waitpid");
        if (milliseconds_left(deadline) == 0)
            result.timed_out = true;
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (result.timed_out) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, &status, 0);
    }
    pid_ = -1;

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
