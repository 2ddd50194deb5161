#include "common/check.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"
#include "tests.hpp"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>

using tutorial::ChildResult;
using tutorial::Context;
using tutorial::Result;

namespace {

// Stands in for a CUDA call that fails, so the test needs no GPU.
cudaError_t pretend_cuda_malloc() {
    return cudaErrorMemoryAllocation;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

int child_exit(const std::vector<std::string>& args) {
    std::printf("exiting with %s\n", args.empty() ? "0" : args[0].c_str());
    return args.empty() ? 0 : std::atoi(args[0].c_str());
}

int child_abort(const std::vector<std::string>&) {
    std::abort();
}

int child_segfault(const std::vector<std::string>&) {
    std::raise(SIGSEGV);  // stands for a real invalid memory access
    return 0;
}

int child_hang(const std::vector<std::string>&) {
    std::printf("hanging\n");
    for (;;) pause();
}

// Writes a line through the descriptor its parent passed it, then echoes its input.
int child_write_passed(const std::vector<std::string>&) {
    const char text[] = "written through the passed descriptor";
    if (write(tutorial::child_passed_fd, text, sizeof text - 1) != sizeof text - 1) return 3;
    close(tutorial::child_passed_fd);
    std::string line;
    std::getline(std::cin, line);
    std::printf("heard %s\n", line.c_str());
    return 0;
}

int child_echo(const std::vector<std::string>&) {
    const std::string input{std::istreambuf_iterator<char>(std::cin),
                            std::istreambuf_iterator<char>()};
    std::printf("got: %s\n", input.c_str());
    return 0;
}

int child_failing_call(const std::vector<std::string>&) {
    std::printf("before the failing call\n");
    CUDA_CHECK(pretend_cuda_malloc());
    std::printf("after the failing call (must not be reached)\n");
    return 0;
}

// Reads one line from its parent with a deadline of args[0] seconds and says what happened.
int child_read_line(const std::vector<std::string>& args) {
    std::string line;
    switch (tutorial::read_input_line(line, std::atof(args.at(0).c_str()))) {
        case tutorial::Input::received: std::printf("received '%s'\n", line.c_str()); return 0;
        case tutorial::Input::closed: std::printf("closed\n"); return 4;
        case tutorial::Input::timed_out: std::printf("timed out\n"); return 5;
    }
    return 3;
}

Result test_error_line(Context& ctx) {
    const std::string expected =
        "file.cu:12: cudaFree(p) failed: cudaErrorInvalidValue (invalid argument)";
    const std::string line =
        tutorial::error_line("file.cu", 12, "cudaFree(p)", cudaErrorInvalidValue);
    std::printf("error_line(...)  = %s\nexpected         = %s\n\n", line.c_str(), expected.c_str());

    // The macro end to end, in a child: the line on stderr, exit code 1, nothing after it.
    const ChildResult child = tutorial::run_child("failing_call", {}, "", 30.0);
    std::printf("CUDA_CHECK(pretend_cuda_malloc()) in a child %s:\n", child.describe().c_str());
    tutorial::print_child_output(child);
    const bool macro_ok = child.exited && child.exit_code == 1 &&
                          contains(child.output, "before the failing call\n") &&
                          contains(child.output, "child_tests.cpp:") &&
                          contains(child.output,
                                   ": pretend_cuda_malloc() failed: cudaErrorMemoryAllocation "
                                   "(out of memory)\n") &&
                          !contains(child.output, "after the failing call") &&
                          child.output.find("before") < child.output.find("failed:");
    return ctx.verdict(
        line == expected && macro_ok,
        "error_line text and CUDA_CHECK's stderr line and exit code 1 match expectations");
}

Result test_child_runner(Context& ctx) {
    struct Case {
        const char* role;
        std::vector<std::string> args;
        std::string input;
        double timeout_s;
        std::string expected;  // ChildResult::describe()
        std::string output;    // must appear in the child's output
    };
    const Case cases[] = {
        {"exit", {"0"}, "", 30, "exited with code 0", "exiting with 0"},
        {"exit", {"7"}, "", 30, "exited with code 7", "exiting with 7"},
        {"abort", {}, "", 30, "died with SIGABRT", ""},
        {"segfault", {}, "", 30, "died with SIGSEGV", ""},
        {"hang", {}, "", 1.0, "did not finish in time and was killed", "hanging"},
        {"echo", {}, "handle 0x7f00", 30, "exited with code 0", "got: handle 0x7f00"},
        {"no_such_role", {}, "", 30, "exited with code 2", "unknown child role 'no_such_role'"},
    };
    tutorial::Table table(
        {{"child"}, {"expected"}, {"got"}, {"ms", tutorial::Align::right}, {"ok"}});
    int wrong = 0;
    for (const Case& c : cases) {
        tutorial::HostTimer timer;
        const ChildResult result = tutorial::run_child(c.role, c.args, c.input, c.timeout_s);
        const double ms = timer.elapsed_ms();
        // A killed child must be killed promptly: well within a second of its deadline.
        const bool prompt = ms < (c.timeout_s + 1.0) * 1000.0;
        // succeeded() and crashed() must agree with the description.
        const bool summary_ok = result.succeeded() == (c.expected == "exited with code 0") &&
                                result.crashed() == (c.expected.rfind("died with", 0) == 0);
        const bool ok = result.describe() == c.expected && contains(result.output, c.output) &&
                        prompt && summary_ok;
        wrong += ok ? 0 : 1;
        table.add_row({c.role, c.expected, result.describe(), tutorial::format("%.0f", ms),
                       ok ? "yes" : "NO"});
        if (!ok) tutorial::print_child_output(result);
    }
    table.print();
    const int total = static_cast<int>(std::size(cases));
    return ctx.verdict(wrong == 0, tutorial::format("%d of %d children ended as expected, with the "
                                                    "expected output",
                                                    total - wrong, total));
}

Result test_passed_descriptor(Context& ctx) {
    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) return ctx.verdict(false, "pipe() failed");
    tutorial::ChildProcess child("write_passed", {}, pipe_ends[1]);
    close(pipe_ends[1]);  // the child now holds its own copy
    const bool sent = child.send("hello\n");
    const ChildResult result = child.wait(10.0);
    char buffer[128] = {};
    const ssize_t n = read(pipe_ends[0], buffer, sizeof buffer - 1);
    close(pipe_ends[0]);
    const std::string through_pipe = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
    std::printf("through the passed descriptor: '%s'; the child %s, its output:\n",
                through_pipe.c_str(), result.describe().c_str());
    tutorial::print_child_output(result);
    const bool ok = sent && through_pipe == "written through the passed descriptor" &&
                    result.succeeded() && contains(result.output, "heard hello\n");
    return ctx.verdict(ok,
                       "the child wrote through the descriptor passed to it, and its stdin and "
                       "stdout still worked");
}

namespace {

bool sigpipe_is_default() {
    struct sigaction now {};
    sigaction(SIGPIPE, nullptr, &now);
    return now.sa_handler == SIG_DFL;
}

bool sigpipe_pending() {
    sigset_t pending;
    sigpending(&pending);
    return sigismember(&pending, SIGPIPE) == 1;
}

}  // namespace

Result test_child_deadlines(Context& ctx) {
    // 1. The child's own deadline: its parent (we) keeps the pipe open and sends nothing.
    tutorial::ChildProcess silent("read_line", {"0.3"});
    std::string said;
    const bool heard = silent.read_line(said, 10.0);  // while its stdin is still open
    const ChildResult gave_up = silent.wait(10.0);
    // A line, and a last line cut short by end-of-file, are received; nothing at all is closed.
    const ChildResult line = tutorial::run_child("read_line", {"10"}, "task 7\nmore\n", 10.0);
    const ChildResult cut = tutorial::run_child("read_line", {"10"}, "task 8", 10.0);
    const ChildResult none = tutorial::run_child("read_line", {"10"}, "", 10.0);
    std::printf("silent parent: read_line gave '%s', the child %s\n", said.c_str(),
                gave_up.describe().c_str());
    const bool reads_ok = heard && said == "timed out" && gave_up.exit_code == 5 &&
                          contains(line.output, "received 'task 7'") &&
                          contains(cut.output, "received 'task 8'") &&
                          contains(none.output, "closed") && contains(gave_up.output, "timed out");

    // 2. Two hanging children waited for with one 1 s deadline: about 1 s in all, not 2.
    tutorial::ChildProcess first("hang", {});
    tutorial::ChildProcess second("hang", {});
    const tutorial::HostTimer timer;
    const tutorial::Deadline deadline(1.0);
    const ChildResult a = first.wait(deadline.seconds_left());
    const ChildResult b = second.wait(deadline.seconds_left());
    const double both_ms = timer.elapsed_ms();
    std::printf("two hanging children, one 1 s deadline: both killed after %.0f ms\n", both_ms);
    const bool shared_ok = a.timed_out && b.timed_out && both_ms < 1800.0;

    // 3. Writing to a child that has exited fails, without SIGPIPE, and leaves SIGPIPE alone.
    const bool default_before = sigpipe_is_default();
    tutorial::ChildProcess gone("exit", {"0"});
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // it exits meanwhile
    const bool sent = gone.send(std::string(1 << 20, 'x'), 5.0);
    const bool default_after = sigpipe_is_default();
    const bool pending = sigpipe_pending();
    gone.wait(5.0);
    std::printf("send to an exited child: %s; SIGPIPE %s before and %s after; %s pending\n",
                sent ? "succeeded" : "failed", default_before ? "default" : "changed",
                default_after ? "default" : "changed", pending ? "one" : "none");
    const bool pipe_ok = !sent && default_before && default_after && !pending;
    return ctx.verdict(reads_ok && shared_ok && pipe_ok,
                       "a child gave up on a silent parent at its deadline, read lines and "
                       "end-of-file right; one deadline bounded two waits; a write to a gone "
                       "child failed without touching SIGPIPE");
}
