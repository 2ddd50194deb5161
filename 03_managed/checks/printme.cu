// Checks of section printme: runs ../printme.cu's walkthrough in a child process, whose output is
// what the kernel printed, and compares that line with the string the host wrote.
#include "03_managed/printme.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr const char* message = "Hello Unified Memory";

// Whether one line of the child's output is `message` exactly (a tool that runs the child, such
// as compute-sanitizer, may add lines of its own).
bool printed(const std::string& output) {
    std::size_t start = 0;
    while (start < output.size()) {
        std::size_t end = output.find('\n', start);
        if (end == std::string::npos) end = output.size();
        if (output.compare(start, end - start, message) == 0) return true;
        start = end + 1;
    }
    return false;
}

}  // namespace

// Child role: the walkthrough, on the section's message (and a newline).
int child_printme(const std::vector<std::string>&) {
    walkthrough((std::string(message) + "\n").c_str());
    return 0;
}

tutorial::Result run_printme(tutorial::Context& ctx) {
    std::printf(
        "The host writes \"%s\" into managed memory; a kernel prints it (the walkthrough,\n"
        "in a child process, so that what the kernel printed can be read back):\n",
        message);
    const tutorial::ChildResult child = tutorial::run_child("printme", {});
    tutorial::print_child_output(child);
    const bool same = child.succeeded() && printed(child.output);
    std::printf("\n");
    ctx.claim(tutorial::documented(
        "kernel_reads_host_write",
        "a kernel reads what the CPU wrote into managed memory, with no copy call", same,
        same ? "its echo matched byte for byte"
             : "it printed something else; the child " + child.describe(),
        "the kernel ran before the host's write reached the page",
        tutorial::Entry{"Runtime API reference: cudaMallocManaged", "CPU GPUs", "is valid"}));
    return ctx.verdict(same,
                       "the kernel printed exactly the string the host wrote (the child's output "
                       "compared byte for byte)");
}

TUTORIAL_SECTION(printme, run_printme);
TUTORIAL_CHILD(printme, child_printme);
