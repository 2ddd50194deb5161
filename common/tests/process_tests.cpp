// common/process: a worker of the same program, its channel, a descriptor over it, how it ended,
// and that it dies with its master. No GPU: the workers are this program's child roles.
#include "common/harness/child.hpp"
#include "common/process.hpp"
#include "common/timing.hpp"
#include "tests.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>  // waitpid, and (with <signal.h>, which it brings) kill and SIGKILL
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

using tutorial::Context;
using tutorial::Result;
using tutorial::Worker;

namespace {

std::vector<std::string> role(const char* name) {
    return {"/proc/self/exe", tutorial::child_flag, name};
}

// How a worker ended, in a few words.
std::string how(int status) {
    if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
    return WIFSIGNALED(status) ? "died with signal " + std::to_string(WTERMSIG(status)) : "?";
}

// Reaps `pid` (a child, or an orphan adopted as a subreaper) within `timeout_s`.
bool reaped_within(pid_t pid, double timeout_s, int* status) {
    for (double waited_s = 0; waited_s < timeout_s; waited_s += 0.01) {
        if (waitpid(pid, status, WNOHANG) == pid) return true;
        usleep(10000);
    }
    return false;
}

}  // namespace

// Reads a number and a descriptor, writes "from the worker" into the descriptor and answers the
// number plus one.
int child_answer_worker(const std::vector<std::string>&) {
    int number = 0;
    if (!tutorial::read_all(STDIN_FILENO, &number, sizeof number)) return 4;
    const int fd = tutorial::receive_descriptor(STDIN_FILENO);
    if (fd < 0) return 5;
    const char text[] = "from the worker";
    const bool wrote = write(fd, text, sizeof text - 1) == static_cast<ssize_t>(sizeof text - 1);
    close(fd);
    const int answer = number + 1;
    return wrote && tutorial::send_all(STDOUT_FILENO, &answer, sizeof answer) ? 0 : 6;
}

// Says a line and half of another, then ends with code 3 without reading anything.
int child_say_and_exit(const std::vector<std::string>&) {
    const char text[] = "first line\nhalf";
    return tutorial::send_all(STDOUT_FILENO, text, sizeof text - 1) ? 3 : 4;
}

// Says nothing and never ends on its own.
int child_silent_worker(const std::vector<std::string>&) {
    for (;;) pause();
}

// Says it is running, then waits for ever.
int child_ready_worker(const std::vector<std::string>&) {
    if (!tutorial::send_all(STDOUT_FILENO, "R", 1)) return 4;
    for (;;) pause();
}

// Starts a worker of its own (`ready_worker`), and once that one runs (past its exec, so that it
// has asked to die with this one) tells its master that worker's pid, and waits.
int child_middle_worker(const std::vector<std::string>&) {
    const Worker below = tutorial::start_worker(role("ready_worker"));
    char ready = 0;
    if (!tutorial::read_all(below.socket, &ready, 1)) return 4;
    if (!tutorial::send_all(STDOUT_FILENO, &below.pid, sizeof below.pid)) return 4;
    for (;;) pause();
}

Result test_worker_process(Context& ctx) {
    // 1. A number and a descriptor there, a number back; the descriptor's file got its bytes.
    int pipe_ends[2];
    const bool piped = pipe(pipe_ends) == 0;
    const Worker answerer = tutorial::start_worker(role("answer_worker"));
    const int number = 41;
    int answer = 0;
    const bool talked = piped && tutorial::send_all(answerer.socket, &number, sizeof number) &&
                        tutorial::send_descriptor(answerer.socket, pipe_ends[1]) &&
                        tutorial::read_all(answerer.socket, &answer, sizeof answer);
    const int answered = tutorial::wait_for(answerer);
    char through[32] = {};
    if (piped) {
        close(pipe_ends[1]);
        const ssize_t got = read(pipe_ends[0], through, sizeof through - 1);
        if (got < 0) through[0] = '\0';
        close(pipe_ends[0]);
    }
    std::printf("answer %d; through the descriptor: '%s'; the worker %s\n", answer, through,
                how(answered).c_str());
    const bool channel_ok = talked && answer == 42 && std::string(through) == "from the worker" &&
                            WIFEXITED(answered) && WEXITSTATUS(answered) == 0;

    // 2. Lines with a deadline, a worker that ends without reading, and a send to it afterwards:
    //    false, and no SIGPIPE ends this process.
    const Worker sayer = tutorial::start_worker(role("say_and_exit"));
    std::string first, second;
    const bool got_first = tutorial::read_line(sayer.socket, &first, 10.0);
    const bool got_second = tutorial::read_line(sayer.socket, &second, 10.0);
    usleep(100000);  // it has exited by now
    bool sent = true;
    for (int i = 0; i < 8 && sent; ++i) sent = tutorial::send_all(sayer.socket, "x", 1);
    const int said = tutorial::wait_for(sayer);
    std::printf("lines '%s' (%s), then '%s' (%s); a send afterwards %s; the worker %s\n",
                first.c_str(), got_first ? "whole" : "none", second.c_str(),
                got_second ? "whole" : "cut short", sent ? "succeeded" : "failed",
                how(said).c_str());
    const bool ending_ok = got_first && first == "first line" && !got_second && !sent &&
                           WIFEXITED(said) && WEXITSTATUS(said) == 3;

    // 3. A silent worker: read_line gives up at its deadline. A command that cannot run: 127.
    const Worker silent = tutorial::start_worker(role("silent_worker"));
    std::string nothing;
    const tutorial::HostTimer waited;
    const bool heard = tutorial::read_line(silent.socket, &nothing, 0.3);
    const double waited_ms = waited.elapsed_ms();
    kill(silent.pid, SIGKILL);
    const int silenced = tutorial::wait_for(silent);
    const int missing = tutorial::wait_for(tutorial::start_worker({"/nonexistent/program"}));
    std::printf("a silent worker: read_line gave up after %.0f ms; a missing program %s\n",
                waited_ms, how(missing).c_str());
    const bool deadline_ok = !heard && waited_ms >= 250 && waited_ms < 5000 &&
                             WIFSIGNALED(silenced) && WIFEXITED(missing) &&
                             WEXITSTATUS(missing) == 127;

    // 4. A worker's own worker dies with it (PR_SET_PDEATHSIG): adopted here as a subreaper.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    const Worker middle = tutorial::start_worker(role("middle_worker"));
    pid_t below = 0;
    const bool told = tutorial::read_all(middle.socket, &below, sizeof below);
    kill(middle.pid, SIGKILL);
    const int middle_status = tutorial::wait_for(middle);
    int below_status = 0;
    const bool below_gone = told && reaped_within(below, 5.0, &below_status);
    if (told && !below_gone) {
        kill(below, SIGKILL);
        waitpid(below, &below_status, 0);
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    std::printf("the killed worker %s; its own worker %s\n", how(middle_status).c_str(),
                below_gone ? how(below_status).c_str() : "outlived it");
    const bool death_ok = below_gone && WIFSIGNALED(below_status) &&
                          WTERMSIG(below_status) == SIGKILL;

    return ctx.verdict(channel_ok && ending_ok && deadline_ok && death_ok,
                       "a worker got a number and a descriptor and answered; lines, end-of-file "
                       "and a send to a gone worker were told apart without SIGPIPE; read_line "
                       "kept its deadline; a missing program exited 127; a worker's worker died "
                       "with it");
}
