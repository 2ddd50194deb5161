// Section robustness: nobody waits for ever on another process.
// Built alone, from the course's folder (mkdir -p build first), then ./build/robustness:
//   nvcc -std=c++17 -I. 07_ipc/robustness.cu common/standalone.cu -o build/robustness
//   (or in 07_ipc/: nvcc -std=c++17 -I.. robustness.cu ../common/standalone.cu
//       -o ../build/robustness)  (on the same line)
#include "common/busy.hpp"  // launch_busy, and check.hpp's CUDA_CHECK
#include "common/process.hpp"
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>  // waitpid, and (with <signal.h>, which it brings) kill and SIGKILL
#include <unistd.h>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>
namespace {

// A worker asks to die with its master and reads its task with a deadline; a master waits for a
// worker with a deadline. The walkthrough takes a worker's master away three ways.

using Clock = std::chrono::steady_clock;

// Workers: this program started again, a Unix socket as stdin and stdout (common/process.hpp).
using tutorial::Worker, tutorial::send_all, tutorial::start_worker;

std::vector<std::string> role(std::vector<std::string> self, const std::vector<std::string>& args) {
    self.insert(self.end(), args.begin(), args.end());
    return self;
}

// Step 1. A worker asks Linux to kill it when its master dies (Linux's prctl). A master
// killed with SIGKILL runs no code at all, so nothing it could do would reach its workers; this
// needs none. (A master that died even before this call is seen as end-of-file, Step 2.)
// start_worker asks it too, between fork and exec; a worker another program started asks itself.
bool die_with_master() {
    return prctl(PR_SET_PDEATHSIG, SIGKILL) == 0;
}

// Step 2. A worker reads its task with a deadline of its own: poll says whether a byte came in
// time, and a read that returns 0 bytes is end-of-file: every write end of the channel is closed,
// so the master is gone (POSIX). A line that end-of-file cuts short is no task either.
enum class Task { received, master_gone, master_silent };

Task read_task(int fd, double timeout_s, std::string* line) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(long(timeout_s * 1000));
    line->clear();
    while (true) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        pollfd ready{fd, POLLIN, 0};
        if (left.count() <= 0 || poll(&ready, 1, static_cast<int>(left.count())) <= 0) {
            return Task::master_silent;
        }
        char c = 0;
        if (read(fd, &c, 1) <= 0) return Task::master_gone;  // a byte at a time: only the line
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
        if (done < 0 || waited_s >= timeout_s) return false;  // not a child of ours; too late
        usleep(5000);                                         // 5 ms between questions
    }
}

// A worker that outlives its deadline is ended here (and still reaped), so that none is left
// behind; `status` then says SIGKILL.
bool ended_within(pid_t worker, double timeout_s, int* status) {
    if (wait_with_deadline(worker, timeout_s, status)) return true;
    kill(worker, SIGKILL);
    waitpid(worker, status, 0);
    return false;
}

// The walkthrough's workers. An orphan: its master never sends a task. It reads as Step 2 does,
// and its exit code says how that ended: 4 the master has gone, 5 the master is silent.
int orphan_worker(double timeout_s) {
    std::string line;
    const Task task = read_task(STDIN_FILENO, timeout_s, &line);
    return task == Task::master_gone ? 4 : task == Task::master_silent ? 5 : 0;
}

// A worker busy in a long kernel, holding device memory, when its master dies.
int stuck_worker(int device, std::size_t bytes) {
    die_with_master();  // Step 1: its master's death ends it, wherever it is
    CUDA_CHECK(cudaSetDevice(device));
    void* held = nullptr;
    CUDA_CHECK(cudaMalloc(&held, bytes));
    CUDA_CHECK(cudaMemset(held, 0, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
    const char holding = 'H';  // it tells its master that it holds the memory
    if (write(STDOUT_FILENO, &holding, 1) != 1) return 4;
    tutorial::launch_busy(nullptr, 30000.0);  // a 30 s kernel
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(held));
    return 0;
}

// A master that will be killed: it starts a stuck worker, tells its own master the worker's pid
// once the worker holds its memory, and waits.
int doomed_master(const std::vector<std::string>& self, int device, std::size_t bytes) {
    const Worker worker =
        start_worker(role(self, {"stuck_worker", std::to_string(device), std::to_string(bytes)}));
    char holding = 0;
    if (read(worker.socket, &holding, 1) != 1) return 3;  // the worker did not get its memory
    if (write(STDOUT_FILENO, &worker.pid, sizeof worker.pid) != sizeof worker.pid) return 3;
    pause();  // killed long before anything wakes it
    return 3;
}

// What the walkthrough found: how each worker ended (waitpid's status), and for the killed
// master's worker, how long after its master it ended and the device's free memory before it
// held its memory, while it did, and after.
struct Found {
    int lost_status = 0, silent_status = 0;
    bool worker_reported = false, worker_gone = false;
    int worker_status = 0;
    double gone_ms = 0.0;
    std::size_t free_before = 0, free_holding = 0, free_after = 0;
};

std::size_t free_memory() {
    std::size_t free = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
}

// `self` runs this program again in the role named after it.
Found walkthrough(int device, std::size_t bytes, const std::vector<std::string>& self) {
    Found found;
    // 1. A master that goes away before the task is complete: it sends half a line, then closes
    //    the channel without a word, as its death would. The worker must see end-of-file.
    const Worker lost = start_worker(role(self, {"orphan_worker", "30"}));
    send_all(lost.socket, "half a ta", 9);
    close(lost.socket);
    ended_within(lost.pid, 20.0, &found.lost_status);
    // 2. A master that is alive but stuck: it keeps the channel open and sends nothing. The
    //    worker's own deadline, here 2 s, ends its wait.
    const Worker waiting = start_worker(role(self, {"orphan_worker", "2"}));
    ended_within(waiting.pid, 20.0, &found.silent_status);
    close(waiting.socket);
    // 3. A master killed (SIGKILL: no code of its own runs) while its worker sits in a kernel,
    //    holding device memory. Its orphans come to us (PR_SET_CHILD_SUBREAPER), so that we can
    //    see how the worker ends.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    found.free_before = free_memory();
    const Worker doomed =
        start_worker(role(self, {"doomed_master", std::to_string(device), std::to_string(bytes)}));
    pid_t worker = 0;
    found.worker_reported = read(doomed.socket, &worker, sizeof worker) == sizeof worker;
    found.free_holding = free_memory();
    kill(doomed.pid, SIGKILL);  // the master alone, not its worker
    const Clock::time_point killed = Clock::now();
    int status = 0;
    ended_within(doomed.pid, 10.0, &status);
    if (found.worker_reported) {
        found.worker_gone = wait_with_deadline(worker, 5.0, &found.worker_status);
        found.gone_ms = std::chrono::duration<double, std::milli>(Clock::now() - killed).count();
        if (!found.worker_gone) ended_within(worker, 0.0, &status);  // it outlived its master
    }
    close(doomed.socket);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    // 4. The device memory of a process that died comes back once the driver has torn down its
    //    context, at a moment no reference names: wait for it, with a deadline (10 s).
    const Clock::time_point until = Clock::now() + std::chrono::seconds(10);
    do {
        found.free_after = free_memory();
    } while (found.free_after + (64 << 20) < found.free_before && Clock::now() < until);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
// How a worker ended, from waitpid's status.
std::string how(int status) {
    if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
    return WIFSIGNALED(status) ? "died with signal " + std::to_string(WTERMSIG(status)) : "?";
}

// Alone, this program is the master of each case; its workers are the same program, started as
// `<program> orphan_worker <seconds>`, `... doomed_master ...` and `... stuck_worker ...`.
int main(int argc, char** argv) {
    const std::vector<std::string> self = {"/proc/self/exe"};
    const std::string as = argc > 1 ? argv[1] : "";
    if (as == "orphan_worker" && argc == 3) return orphan_worker(std::atof(argv[2]));
    if (as == "stuck_worker" && argc == 4) {
        return stuck_worker(std::atoi(argv[2]), std::strtoull(argv[3], nullptr, 10));
    }
    if (as == "doomed_master" && argc == 4) {
        return doomed_master(self, std::atoi(argv[2]), std::strtoull(argv[3], nullptr, 10));
    }
    const Found f = walkthrough(0, std::size_t{256} << 20, self);
    std::printf("1. lost channel: the worker %s\n", how(f.lost_status).c_str());
    std::printf("2. silent master: the worker %s\n", how(f.silent_status).c_str());
    std::printf("3. killed master: its worker %s, %.0f ms after it\n",
                f.worker_gone ? how(f.worker_status).c_str() : "outlived it", f.gone_ms);
    std::printf("4. free device memory: %zu MiB before, %zu MiB while held, %zu MiB after\n",
                f.free_before >> 20, f.free_holding >> 20, f.free_after >> 20);
    return 0;
}
#endif
