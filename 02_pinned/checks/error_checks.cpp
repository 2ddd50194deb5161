// Checks of section error_checks: runs the walkthrough of ../error_checks.cpp (the tutorial's
// program) in two children, once with checkRuntime and once with CUDA_CHECK, and judges what each
// reported and where it stopped.
#include "02_pinned/error_checks.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using tutorial::ChildResult;

namespace {

// What one version of the program did: how many failures it reported, and the value it printed.
struct MacroRun {
    ChildResult child;
    int reports = 0;
    bool printed_value = false;
    double value = 0.0;
};

MacroRun run_version(const char* macro, int device, std::size_t too_many_bytes) {
    MacroRun run;
    run.child = tutorial::run_child(
        "tutorial_program", {macro, std::to_string(device), std::to_string(too_many_bytes)});
    std::istringstream lines(run.child.output);
    for (std::string line; std::getline(lines, line);) {
        const bool report = line.rfind("runtime error ", 0) == 0 ||
                            line.find(" failed: cudaError") != std::string::npos;
        run.reports += report ? 1 : 0;
        char* end = nullptr;
        const double number = std::strtod(line.c_str(), &end);
        if (!line.empty() && end == line.c_str() + line.size()) {
            run.printed_value = true;
            run.value = number;
        }
    }
    return run;
}

// The error name in checkRuntime's report of `call`: its output is "runtime error FILE:LINE  CALL
// failed." and, on the next line, "  code = cudaErrorX, message = ...".
std::string first_code(const std::string& output, const char* call) {
    const std::size_t line = output.find(call);
    if (line == std::string::npos) return "(no report of it)";
    const std::size_t code = output.find("code = ", line);
    if (code == std::string::npos) return "(no code)";
    const std::size_t end = output.find_first_of(",\n", code);
    return output.substr(code + 7, end == std::string::npos ? end : end - code - 7);
}

void print_version(const char* title, const MacroRun& run) {
    std::printf("%s\n", title);
    tutorial::print_child_output(run.child);
    std::printf("   The child %s.\n\n", run.child.describe().c_str());
}

}  // namespace

// Child role: the walkthrough (the tutorial's program) checked by `checkRuntime` or
// `CUDA_CHECK` (args: that name, the device, the size for the failing cudaMalloc).
int child_tutorial_program(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(1).c_str());
    const std::size_t too_many_bytes = std::strtoull(args.at(2).c_str(), nullptr, 10);
    return walkthrough(args.at(0) == "checkRuntime", device, too_many_bytes);
}

tutorial::Result run_error_checks(tutorial::Context& ctx) {
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t too_many_bytes = 2 * total_bytes;
    std::printf(
        "The tutorial's program, its cudaMalloc asking for %s (twice what device %d has),\n"
        "run twice in fresh processes: checked by the tutorial's checkRuntime, then by the\n"
        "course's CUDA_CHECK.\n\n",
        tutorial::format_bytes(too_many_bytes).c_str(), ctx.device);
    const MacroRun tutorial_way = run_version("checkRuntime", ctx.device, too_many_bytes);
    const MacroRun course_way = run_version("CUDA_CHECK", ctx.device, too_many_bytes);
    print_version("1. checkRuntime(op): report, return false, carry on", tutorial_way);
    print_version("2. CUDA_CHECK(op): report, stop with exit code 1", course_way);

    std::printf(
        "Both name the file, the line, the call as written and the error. checkRuntime then\n"
        "lets the program go on with a null pointer: each later call that uses it fails too,\n"
        "the program prints a value that never came from the GPU, and exits with code 0, so a\n"
        "script or CTest sees success. CUDA_CHECK stops at the first failure with exit code 1.\n"
        "It does so where the failing call is written: in this course the call a section\n"
        "teaches sits in the section's own file, so the message points at the line you read.\n\n");
    const bool ran_on = tutorial_way.child.succeeded() && tutorial_way.reports >= 2 &&
                        tutorial_way.printed_value && tutorial_way.value != 520.25;
    const bool stopped =
        course_way.child.failed_with("cudaErrorMemoryAllocation") && course_way.reports == 1 &&
        !course_way.printed_value &&
        course_way.child.output.find("cudaMalloc(&memory_device") != std::string::npos;
    const std::string reported = first_code(tutorial_way.child.output, "cudaMalloc(&memory_device");
    const tutorial::Entry malloc_entry{"Runtime API reference: cudaMalloc",
                                       "cudaErrorMemoryAllocation failure", "returns"};
    ctx.claim(tutorial::documented_error(
        "check_runtime_reports",
        "checkRuntime reports the failed cudaMalloc with the code its entry lists", reported,
        "cudaErrorMemoryAllocation",
        "the cudaMalloc of twice the device's memory did not fail, or checkRuntime's first "
        "report is of another call",
        malloc_entry));
    ctx.claim(tutorial::observed(
        "runs_on", "...and the program runs on regardless", ran_on,
        tutorial::format("%d failures reported, then it printed %f instead of 520.25; the "
                         "child %s",
                         tutorial_way.reports, tutorial_way.value,
                         tutorial_way.child.describe().c_str()),
        "the program goes on to hand the pointer the failed cudaMalloc left behind to cudaMemcpy "
        "and cudaFree; for a pointer that does not match the copy's kind the cudaMemcpy entry "
        "calls the result undefined"));
    // That CUDA_CHECK stops the program is the course's own macro at work, not a promise of
    // CUDA's: the verdict checks it.
    return ctx.verdict(reported == "cudaErrorMemoryAllocation" && stopped,
                       std::string("cudaMalloc's documented error in both versions; CUDA_CHECK ") +
                           (stopped ? "stopped the program at the failed cudaMalloc"
                                    : "did not stop the program at the failed cudaMalloc (see "
                                      "the child's output above)") +
                           "; what checkRuntime's program did next is this driver's");
}

TUTORIAL_SECTION(error_checks, run_error_checks);
TUTORIAL_CHILD(tutorial_program, child_tutorial_program);
