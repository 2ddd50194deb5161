// Section robustness: nobody waits for ever on another process. A worker asks to die with its
// master and reads its task with a deadline; a master waits for a worker with a deadline.
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <string>

namespace {

// Step 1. A worker asks the kernel to kill it when its master dies (Linux's prctl). A master
// killed with SIGKILL runs no code at all, so nothing it could do would reach its workers; this
// needs none. (A master that died even before this call is seen as end-of-file, Step 2.)
bool die_with_master() {
    return prctl(PR_SET_PDEATHSIG, SIGKILL) == 0;
}

// Step 2. A worker reads its task with a deadline of its own: poll says whether a byte came in
// time, and a read that returns 0 bytes is end-of-file: every write end of the pipe is closed, so
// the master is gone (POSIX). A line that end-of-file cuts short is no task either.
enum class Task { received, master_gone, master_silent };

Task read_task(int fd, double timeout_s, std::string* line) {
    using Clock = std::chrono::steady_clock;
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
    line->clear();
    while (true) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        pollfd ready{fd, POLLIN, 0};
        const int events = left.count() > 0 ? poll(&ready, 1, static_cast<int>(left.count())) : 0;
        if (events < 0 && errno == EINTR) continue;
        if (events == 0) return Task::master_silent;
        char c = 0;
        const ssize_t n = read(fd, &c, 1);  // a byte at a time: nothing after the line is taken
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return Task::master_gone;
        if (c == '\n') return Task::received;
        *line += c;
    }
}

// Step 3. A master waits for a worker with a deadline too. waitpid with WNOHANG answers at once,
// so ask again until the deadline; `status` then tells an exit (WIFEXITED) from a crash or a
// kill (WIFSIGNALED, WTERMSIG).
bool wait_with_deadline(pid_t worker, double timeout_s, int* status) {
    for (double waited_s = 0;; waited_s += 0.005) {
        const pid_t done = waitpid(worker, status, WNOHANG);
        if (done == worker) return true;
        if (done < 0 && errno != EINTR) return false;  // not a child of ours (any more)
        if (waited_s >= timeout_s) return false;
        usleep(5000);  // 5 ms between questions
    }
}

}  // namespace
