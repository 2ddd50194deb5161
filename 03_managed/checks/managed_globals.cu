// Checks of section managed_globals: runs ../managed_globals.cu's sum, shows a kernel the value
// the host stored, and runs each first touch of y in a fresh process, reading device 0's primary
// context before and after.
#include "03_managed/managed_globals.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace {

__device__ __managed__ int shown;

__global__ void show(int* seen) {
    printf("GPU sees: x = %d\n", shown);
    *seen = shown;
}

// The primary context's state before and after a fresh process's first touch of a variable.
struct FirstTouch {
    const char* how;  // the child's argument: "read", "write" or "address"
    tutorial::ChildResult child;
    std::string before, after;
};

std::vector<FirstTouch> measure_first_touches() {
    std::vector<FirstTouch> touches;
    for (const char* how : {"read", "write", "address"}) {
        FirstTouch t{how, tutorial::run_child("touch_managed_variable", {how}), "", ""};
        t.before = tutorial::child_answer(t.child, "before the host touches y");
        t.after = tutorial::child_answer(t.child, "after the host");
        touches.push_back(t);
    }
    return touches;
}

}  // namespace

// Child role: a fresh process whose first use of CUDA is host_touches_y (args: "read", "write"
// or "address"), with device 0's primary context read before and after.
int child_touch_managed_variable(const std::vector<std::string>& args) {
    const std::string how = args.at(0);
    const auto state = [] { return tutorial::primary_context_active(0) ? "active" : "inactive"; };
    std::printf("%-34s -> %s\n", "before the host touches y", state());
    host_touches_y(how);
    const char* done = how == "read" ? "reads y" : how == "write" ? "writes y" : "takes &y";
    std::printf("%-34s -> %s\n", (std::string("after the host ") + done).c_str(), state());
    return 0;
}

tutorial::Result run_managed_globals(tutorial::Context& ctx) {
    std::printf(
        "__device__ __managed__ int x[2], y;  the host sets x[0] = 3 and y = 5, a kernel\n"
        "computes x[1] = x[0] + y:\n");
    const int result = add_with_managed_globals();
    std::printf("result = %d (expected 8)\n\n", result);

    std::printf("The host sets a managed variable to 1234; a kernel prints what it sees:\n");
    int* seen = nullptr;
    CUDA_CHECK(cudaMallocManaged(&seen, sizeof *seen));
    *seen = 0;
    shown = 1234;
    show<<<1, 1>>>(seen);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    const int gpu_saw = *seen;
    CUDA_CHECK(cudaFree(seen));

    std::printf(
        "\nFresh processes whose first CUDA act is the host touching y; the primary context of\n"
        "device 0 before and after, from cuDevicePrimaryCtxGetState:\n");
    const std::vector<FirstTouch> touches = measure_first_touches();
    tutorial::Table table({{"the host"}, {"before"}, {"after"}, {"child"}});
    bool access_creates = true;   // read and write: accesses, which N.2.3 speaks of
    bool address_creates = true;  // &y: no access to the variable's memory
    std::string access_states;
    std::string address_state;
    for (const FirstTouch& t : touches) {
        table.add_row({t.how, t.before, t.after, t.child.describe()});
        const bool created = t.child.succeeded() && t.before == "inactive" && t.after == "active";
        const std::string state = std::string(t.how) + ": " + t.before + " -> " + t.after;
        if (std::string(t.how) == "address") {
            address_creates = created;
            address_state = state;
        } else {
            access_creates = access_creates && created;
            access_states += (access_states.empty() ? "" : ", ") + state;
        }
    }
    table.print();
    std::printf(
        "\nA __managed__ variable behaves like memory from cudaMallocManaged, with a symbol\n"
        "instead of a pointer. It needs a CUDA context: the host's first access creates the\n"
        "current device's context (the Guide's N.2.3); on this driver even taking its address\n"
        "does (observed on driver 580.159.04). __constant__ variables cannot be managed; the\n"
        "chapter's build tests show nvcc refusing that and other misuses (see the README).\n\n");
    ctx.claim(tutorial::documented(
        "use_by_name",
        "host and kernel use a __managed__ variable by name, with no pointer and no copy",
        result == 8,
        tutorial::format("the kernel computed x[1] = %d from the host's x[0] and y", result),
        "the kernel did not run; its launch check says why",
        tutorial::Entry{"Programming Guide, N.2.1.2 Global-Scope Managed Variables Using managed",
                        "__device__ __managed__", "可以"}));
    ctx.claim(tutorial::documented(
        "kernel_sees_host_store",
        "a kernel sees what the host stored in a __managed__ variable before the launch",
        gpu_saw == 1234, tutorial::format("the kernel saw %d", gpu_saw),
        "the host's store had not reached the page when the kernel read it",
        tutorial::Entry{"Programming Guide, N.2.1.2 Global-Scope Managed Variables Using managed",
                        "__device__ __managed__", "可以"}));
    // N.2.3: in its example, accessing x before the kernel launch creates device 0's context (会).
    ctx.claim(tutorial::documented(
        "first_access_creates_context",
        "the host's first access to a __managed__ variable creates the primary context",
        access_creates, access_states,
        "see the table: a context existed before, or the access did not create one",
        tutorial::Entry{"Programming Guide, N.2.3 Language Integration", "x", "会"}));
    ctx.claim(tutorial::observed(
        "address_creates_context",
        "taking a __managed__ variable's address also creates the primary context", address_creates,
        address_state,
        "N.2.3 speaks of accessing the variable; taking its address reads none of its memory"));
    return ctx.verdict(result == 8 && gpu_saw == 1234 && access_creates,
                       tutorial::format("x[1] = %d (expected 8), the kernel saw x = %d "
                                        "(expected 1234), and the context's state around each "
                                        "first access",
                                        result, gpu_saw));
}

TUTORIAL_SECTION(managed_globals, run_managed_globals);
TUTORIAL_CHILD(touch_managed_variable, child_touch_managed_variable);
