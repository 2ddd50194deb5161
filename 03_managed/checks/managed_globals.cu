// Checks of section managed_globals: runs ../managed_globals.cu's walkthrough in three fresh
// processes, whose first CUDA act is the host reading y, writing it, or taking its address, and
// judges what each saw: the context around the first touch, x[1], and the value the kernel printed.
#include "03_managed/managed_globals.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const char* state(bool active) {
    return active ? "active" : "inactive";
}

// One child's walkthrough, as its output tells it.
struct FirstTouch {
    const char* how;  // the child's argument: "read", "write" or "address"
    tutorial::ChildResult child;
    std::string before, after;
    int result = -1;   // x[1]
    int gpu_saw = -1;  // what the kernel printed
};

// Whether the child's first touch created the primary context, and the states it went through.
bool created(const FirstTouch& t) {
    return t.child.succeeded() && t.before == "inactive" && t.after == "active";
}

std::string states(const FirstTouch& t) {
    return std::string(t.how) + ": " + t.before + " -> " + t.after;
}

FirstTouch run_first_touch(const char* how) {
    FirstTouch t{how, tutorial::run_child("managed_globals", {how}), "", ""};
    t.before = tutorial::child_answer(t.child, "context before the first touch");
    t.after = tutorial::child_answer(t.child, "context after the first touch");
    t.result = std::atoi(tutorial::child_answer(t.child, "x[1]").c_str());
    const std::string printed = "GPU sees: value = ";
    const std::size_t at = t.child.output.find(printed);
    if (at != std::string::npos)
        t.gpu_saw = std::atoi(t.child.output.c_str() + at + printed.size());
    return t;
}

}  // namespace

// Child role: the walkthrough in a fresh process (args: how the host touches y first).
int child_managed_globals(const std::vector<std::string>& args) {
    const Found found = walkthrough(args.at(0));
    std::printf("context before the first touch -> %s\n", state(found.context_before));
    std::printf("context after the first touch -> %s\n", state(found.context_after));
    std::printf("x[1] -> %d\n", found.result);
    return 0;
}

tutorial::Result run_managed_globals(tutorial::Context& ctx) {
    std::printf(
        "The walkthrough in three fresh processes, whose first CUDA act is the host reading y,\n"
        "writing it, or taking its address; device 0's primary context before and after, from\n"
        "cuDevicePrimaryCtxGetState. Then x[0] = 3, y = 5, a kernel computes x[1] = x[0] + y;\n"
        "the host stores value = 1234 and a kernel prints what it sees:\n");
    std::vector<FirstTouch> touches;
    for (const char* how : {"read", "write", "address"}) touches.push_back(run_first_touch(how));
    const FirstTouch& read = touches[0];
    const FirstTouch& write = touches[1];
    const FirstTouch& address = touches[2];
    tutorial::print_child_output(read.child);
    std::printf("\n");
    tutorial::Table table({{"the host"}, {"before"}, {"after"}, {"child"}});
    bool sums = true;
    bool saw = true;
    for (const FirstTouch& t : touches) {
        table.add_row({t.how, t.before, t.after, t.child.describe()});
        sums = sums && t.result == 8;
        saw = saw && t.gpu_saw == 1234;
    }
    table.print();
    std::printf(
        "\nA __managed__ variable behaves like memory from cudaMallocManaged, with a symbol\n"
        "instead of a pointer. It needs a CUDA context: the host's first access can create the\n"
        "current device's context, and a store before any launch does (the Guide's N.2.3);\n"
        "taking its address reads none of its memory. __constant__ variables cannot be\n"
        "managed; the chapter's build tests show nvcc refusing that and other misuses (see the\n"
        "README).\n\n");
    const tutorial::Entry by_name{
        "Programming Guide, N.2.1.2 Global-Scope Managed Variables Using managed",
        "__device__ __managed__", "可以"};
    ctx.claim(tutorial::documented(
        "use_by_name",
        "host and kernel use a __managed__ variable by name, with no pointer and no copy", sums,
        tutorial::format("the kernel computed x[1] = %d from the host's x[0] and y",
                         read.result),
        "the kernel did not run; its launch check says why", by_name));
    ctx.claim(tutorial::documented(
        "kernel_sees_host_store",
        "a kernel sees what the host stored in a __managed__ variable before the launch", saw,
        tutorial::format("the kernel saw %d", read.gpu_saw),
        "the host's store had not reached the page when the kernel read it", by_name));
    // N.2.3: in its example, the host's store to x before the kernel launch creates device 0's
    // context (会); of an access in general it says only that it can (可以) create one.
    ctx.claim(tutorial::documented(
        "first_access_creates_context",
        "the host's first write to a __managed__ variable, before any launch, creates the primary "
        "context",
        created(write), states(write),
        "see the table: a context existed before, or the store did not create one",
        tutorial::Entry{"Programming Guide, N.2.3 Language Integration", "x", "会"}));
    ctx.claim(tutorial::observed(
        "first_read_creates_context",
        "the host's first read of a __managed__ variable creates the primary context too",
        created(read), states(read),
        "N.2.3 says an access to a __managed__ variable can (可以) trigger the context's creation; "
        "its will (会) is for its example's store before the launch"));
    ctx.claim(tutorial::observed(
        "address_creates_context",
        "taking a __managed__ variable's address also creates the primary context",
        created(address), states(address),
        "N.2.3 speaks of accessing the variable; taking its address reads none of its memory"));
    return ctx.verdict(sums && saw && created(write),
                       tutorial::format("x[1] = %d (expected 8), the kernel saw value = %d "
                                        "(expected 1234), and the context's state around each "
                                        "first access",
                                        read.result, read.gpu_saw));
}

TUTORIAL_SECTION(managed_globals, run_managed_globals);
TUTORIAL_CHILD(managed_globals, child_managed_globals);
