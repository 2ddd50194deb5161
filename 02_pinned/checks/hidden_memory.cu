// Checks of section hidden_memory: runs ../hidden_memory.cu's walkthrough in fresh child
// processes (LAZY and EAGER with cudaSetDevice first, then each other call first) and, after
// every step a child reports, reads the watched devices' free memory from this process, whose
// own contexts exist before the children start: the measuring creates nothing it measures.
#include "02_pinned/hidden_memory.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"

#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;

namespace {

constexpr double mib = 1024.0 * 1024.0;
constexpr double array_mib = array_bytes / mib;
// The walkthrough's steps the claims read, by the names it gives them.
constexpr const char* set_device_step = "cudaSetDevice(device)";
constexpr const char* first_launch_step = "first launch of a kernel of this file";

// The child role's names for the first call, in First's order.
const std::vector<std::string> first_names = {"cudaSetDevice", "cudaMemGetInfo", "cudaMallocHost",
                                              "cudaHostRegister", "launch"};

// One step of a child, as this process saw it.
struct Seen {
    std::string step;
    std::string contexts;      // the devices with a primary context after it (the driver's answer)
    std::vector<double> lost;  // MiB each watched device lost during it
};

// One child's walkthrough.
struct Run {
    std::vector<Seen> steps;
    std::string mode;  // the module loading mode its driver took
    tutorial::ChildResult result;

    const Seen* find(const std::string& step) const {
        for (const Seen& seen : steps)
            if (seen.step == step) return &seen;
        return nullptr;
    }
    double lost(const std::string& step, std::size_t watched) const {
        const Seen* seen = find(step);
        return seen != nullptr ? seen->lost.at(watched) : 0.0;
    }
    double total(std::size_t watched) const {
        double sum = 0.0;
        for (const Seen& seen : steps) sum += seen.lost.at(watched);
        return sum;
    }
};

// Who watches: this process's device, the device the children mean, and the devices whose
// memory is read (device 0 first where the children mean another).
struct Watch {
    int home = 0;
    int target = 0;
    std::vector<int> devices;
    std::size_t target_index() const { return devices.size() - 1; }
};

// Each watched device's free memory, read with this process's own contexts.
std::vector<std::size_t> free_memory(const Watch& w) {
    std::vector<std::size_t> free(w.devices.size());
    for (std::size_t i = 0; i < w.devices.size(); ++i) {
        std::size_t total = 0;
        CUDA_CHECK(cudaSetDevice(w.devices[i]));
        CUDA_CHECK(cudaMemGetInfo(&free[i], &total));
    }
    CUDA_CHECK(cudaSetDevice(w.home));
    return free;
}

// Starts a child that runs the walkthrough; after each step it reports, reads the free memory
// and tells it to go on.
Run watch(const Watch& w, const char* loading, First first, bool kernels) {
    Run run;
    std::vector<std::size_t> before = free_memory(w);
    tutorial::ChildProcess child("hidden_memory_steps",
                                 {loading, first_names.at(static_cast<std::size_t>(first)),
                                  std::to_string(w.target), kernels ? "kernels" : "no-kernels"});
    std::string line;
    while (child.read_line(line, 60.0)) {
        const std::size_t bar = line.find(" | contexts ");
        if (line.rfind("step ", 0) != 0 || bar == std::string::npos) continue;
        const std::vector<std::size_t> after = free_memory(w);
        Seen seen{line.substr(5, bar - 5), line.substr(bar + 12), {}};
        for (std::size_t i = 0; i < after.size(); ++i)
            seen.lost.push_back((double(before[i]) - double(after[i])) / mib);
        run.steps.push_back(seen);
        before = after;
        if (!child.send("go\n")) break;
    }
    run.result = child.wait(30.0);
    const std::string& out = run.result.output;
    const std::size_t at = out.find("loading mode ");
    if (at != std::string::npos) run.mode = out.substr(at + 13, out.find('\n', at) - at - 13);
    return run;
}

bool has_device(const std::string& contexts, int device) {
    return (" " + contexts + " ").find(" " + std::to_string(device) + " ") != std::string::npos;
}

std::string mib_cell(double value) {
    return format("%.0f", value);
}

// The walkthrough under both loading modes, step by step.
void print_walkthrough(const Watch& w, const Run& lazy, const Run& eager) {
    std::vector<tutorial::Column> columns = {{"step (a fresh process)"}};
    for (int d : w.devices) {
        columns.push_back({format("LAZY GPU %d", d), tutorial::Align::right});
        columns.push_back({format("EAGER GPU %d", d), tutorial::Align::right});
    }
    columns.push_back({"contexts (LAZY)"});
    tutorial::Table table(columns);
    table.named("steps");
    for (const Seen& seen : lazy.steps) {
        std::vector<std::string> row = {seen.step};
        const Seen* other = eager.find(seen.step);
        for (std::size_t i = 0; i < w.devices.size(); ++i) {
            row.push_back(mib_cell(seen.lost.at(i)));
            row.push_back(other != nullptr ? mib_cell(other->lost.at(i)) : "-");
        }
        row.push_back(seen.contexts);
        table.add_row(row);
    }
    table.print();
}

// Which call made the first context, on which device; then cudaSetDevice on the one meant.
void print_first_calls(const Watch& w, const std::vector<const Run*>& runs) {
    std::vector<tutorial::Column> columns = {{"first call"}};
    for (int d : w.devices) columns.push_back({format("GPU %d MiB", d), tutorial::Align::right});
    columns.push_back({"contexts after"});
    columns.push_back(
        {format("then cudaSetDevice(%d): GPU %d MiB", w.target, w.target), tutorial::Align::right});
    columns.push_back({"contexts after"});
    tutorial::Table table(columns);
    table.named("first_calls");
    for (const Run* run : runs) {
        if (run->steps.size() < 2) continue;
        const Seen& first = run->steps[1];
        std::vector<std::string> row = {first.step};
        for (double lost : first.lost) row.push_back(mib_cell(lost));
        row.push_back(first.contexts);
        const Seen* then = run->find("then cudaSetDevice(device)");
        row.push_back(then != nullptr ? mib_cell(then->lost.at(w.target_index())) : "-");
        row.push_back(then != nullptr ? then->contexts : "-");
        table.add_row(row);
    }
    table.print();
}

}  // namespace

// Child role: the walkthrough as told (LAZY|EAGER, the first call, the device, kernels or not);
// after each step "step <name> | contexts <devices>", then it waits for a line from the parent.
int child_hidden_memory_steps(const std::vector<std::string>& args) {
    First first = First::set_device;
    for (std::size_t i = 0; i < first_names.size(); ++i)
        if (args.at(1) == first_names[i]) first = static_cast<First>(i);
    const Plan plan{args.at(0).c_str(), first, std::atoi(args.at(2).c_str()),
                    args.at(3) == "kernels"};
    const CUmoduleLoadingMode mode = walkthrough(plan, [](const char* step) {
        std::string contexts;
        for (int d = 0; d < tutorial::device_count(); ++d)
            if (tutorial::primary_context_active(d))
                contexts += (contexts.empty() ? "" : " ") + std::to_string(d);
        std::printf("step %s | contexts %s\n", step, contexts.empty() ? "none" : contexts.c_str());
        std::fflush(stdout);
        std::string go;
        if (tutorial::read_input_line(go, 60.0) != tutorial::Input::received) std::exit(3);
    });
    std::printf("loading mode %s\n", mode == CU_MODULE_EAGER_LOADING  ? "EAGER"
                                     : mode == CU_MODULE_LAZY_LOADING ? "LAZY"
                                                                      : "unknown");
    return 0;
}

namespace {

void claim_modules(tutorial::Context& ctx, const Watch& w, const Run& lazy, const Run& eager,
                   const std::string& why_not) {
    const std::size_t t = w.target_index();
    ctx.claim(tutorial::at_least("context_costs_memory",
                                 "a context costs device memory before any allocation (MiB lost at "
                                 "a fresh process's cudaSetDevice)",
                                 lazy.lost(set_device_step, t), 32.0, " MiB",
                                 "another process gave memory back meanwhile, or this driver "
                                 "made the context out of memory it had set aside before")
                  .again([&] {
                      return watch(w, "LAZY", First::set_device, false).lost(set_device_step, t);
                  }));
    ctx.claim(tutorial::at_least("lazy_loads_at_first_launch",
                                 "with LAZY a module's 128 MiB array comes at its first launch, "
                                 "even one not using it (MiB lost / 128 MiB)",
                                 lazy.lost(first_launch_step, t) / array_mib, 0.9, "x",
                                 "the module was loaded before its first launch (at context "
                                 "creation: did the driver take LAZY?)")
                  .again([&] {
                      const Run again = watch(w, "LAZY", First::set_device, true);
                      return again.lost(first_launch_step, t) / array_mib;
                  }),
              why_not);
    ctx.claim(
        tutorial::at_least(
            "eager_loads_at_context",
            "with EAGER the array comes with the context instead (MiB at cudaSetDevice above "
            "LAZY's / 128 MiB)",
            (eager.lost(set_device_step, t) - lazy.lost(set_device_step, t)) / array_mib, 0.9, "x",
            "the driver did not load the modules with the context: did it "
            "take CUDA_MODULE_LOADING=EAGER, set before the first CUDA call?")
            .again([&] {
                const Run l = watch(w, "LAZY", First::set_device, false);
                const Run e = watch(w, "EAGER", First::set_device, false);
                return (e.lost(set_device_step, t) - l.lost(set_device_step, t)) / array_mib;
            }),
        why_not);
}

void claim_first_calls(tutorial::Context& ctx, const Watch& w, const Run& lazy,
                       const std::vector<Run>& openers) {
    const Seen* set = lazy.find(set_device_step);
    ctx.claim(tutorial::documented(
        "set_device_creates",
        "cudaSetDevice(device) as a process's first call creates that device's primary context",
        set != nullptr && has_device(set->contexts, w.target),
        format("contexts after it on GPU %s", set != nullptr ? set->contexts.c_str() : "(no step)"),
        "this runtime only chose the device (CUDA 11 did)",
        tutorial::Entry{"Runtime API reference: cudaSetDevice", "primary initialize", "will"}));
    int on_device_0 = 0;
    std::string seen;
    for (const Run& run : openers) {
        if (run.steps.size() < 2) continue;
        const Seen& first = run.steps[1];
        on_device_0 += has_device(first.contexts, 0) ? 1 : 0;
        seen += format("%s%s -> GPU %s, %.0f MiB", seen.empty() ? "" : "; ", first.step.c_str(),
                       first.contexts.c_str(), first.lost.at(0));
    }
    ctx.claim(tutorial::observed(
        "first_calls_create_context",
        "cudaMemGetInfo, cudaMallocHost, cudaHostRegister and a kernel launch, each a fresh "
        "process's first call, create device 0's primary context",
        on_device_0 == 4, format("%d of 4: ", on_device_0) + seen,
        "their entries do not say whether they create a context: the runtime makes the current "
        "device's at the first call that needs one, and which calls need one is its choice"));
}

// Only where the children mean a device other than 0: which device pays.
void claim_which_device(tutorial::Context& ctx, const Watch& w, const Run& lazy,
                        const Run& mem_get_info_first) {
    const std::string one_gpu = w.target == 0 ? "one GPU here: the device a process means is "
                                                "device 0 itself"
                                              : "";
    const auto device_0_at_first_call = [](const Run& run) {
        return run.steps.size() >= 2 ? run.steps[1].lost.at(0) : 0.0;
    };
    ctx.claim(tutorial::at_least("unasked_device_pays",
                                 "a process meant for another device that calls cudaMemGetInfo "
                                 "before cudaSetDevice pays a context on device 0 (MiB device 0 "
                                 "lost at that call)",
                                 device_0_at_first_call(mem_get_info_first), 32.0, " MiB",
                                 "the runtime made no context for cudaMemGetInfo here")
                  .again([&] {
                      return device_0_at_first_call(watch(w, "LAZY", First::mem_get_info, false));
                  }),
              one_gpu);
    ctx.claim(tutorial::at_most("set_device_spares_device_0",
                                "one that calls cudaSetDevice first costs device 0 nothing, its "
                                "kernels and modules included (MiB device 0 lost over all its "
                                "steps)",
                                lazy.total(0), 16.0, " MiB",
                                "the driver set memory aside on the other device too")
                  .again([&] { return watch(w, "LAZY", First::set_device, true).total(0); }),
              one_gpu);
}

}  // namespace

tutorial::Result run_hidden_memory(tutorial::Context& ctx) {
    Watch w;
    w.home = ctx.device;
    w.target = tutorial::device_count() >= 2 && ctx.device == 0 ? 1 : ctx.device;
    w.devices = w.target == 0 ? std::vector<int>{0} : std::vector<int>{0, w.target};
    CUDA_CHECK(cudaSetDevice(w.target));
    const std::string too_little = tutorial::why_too_little_free(
        std::size_t{1} << 30, "a fresh process's context alone takes 0.5 to 0.8 GiB");
    const std::string why_not = tutorial::why_too_little_free(
        (std::size_t{1} << 30) + (std::size_t{192} << 20),
        "for a context, 64 MiB of cudaMalloc and the module's 128 MiB array");
    CUDA_CHECK(cudaSetDevice(w.home));
    if (!too_little.empty()) return ctx.skip(too_little);
    free_memory(w);  // this process's own contexts exist before anything is measured
    const std::string watched =
        w.devices.size() > 1 ? format("s 0 and %d", w.target) : format(" %d", w.target);
    std::printf(
        "Fresh child processes take a program's first steps one at a time, meaning GPU %d; after\n"
        "each, this process reads the free memory of GPU%s with its own contexts\n"
        "(cudaMemGetInfo), and asks nothing that could create what it measures. Each child also\n"
        "says which devices have a primary context (the driver's answer, as in `context`).\n\n"
        "1. cudaSetDevice first, then 64 MiB of cudaMalloc and the first launches of a kernel of\n"
        "   a small module and of this file's module, which holds a %.0f MiB __device__ array;\n"
        "   CUDA_MODULE_LOADING=LAZY (the default) and EAGER, set before the first CUDA call.\n"
        "   MiB each GPU lost at each step, and the devices with a primary context after it:\n\n",
        w.target, watched.c_str(), array_mib);
    const Run lazy = watch(w, "LAZY", First::set_device, why_not.empty());
    const Run eager = why_not.empty() ? watch(w, "EAGER", First::set_device, true) : Run{};
    print_walkthrough(w, lazy, eager);
    std::printf("   The LAZY child %s (the driver took %s); %s.\n\n",
                lazy.result.describe().c_str(), lazy.mode.c_str(),
                why_not.empty() ? ("the EAGER child " + eager.result.describe() +
                                   " (the driver "
                                   "took " +
                                   eager.mode + ")")
                                      .c_str()
                                : "no kernels and no EAGER child: too little free memory");

    std::vector<Run> openers;
    for (First first :
         {First::mem_get_info, First::malloc_host, First::host_register, First::kernel_launch})
        openers.push_back(watch(w, "LAZY", first, false));
    std::printf("2. Another call first, before cudaSetDevice(%d); MiB each GPU lost at it:\n\n",
                w.target);
    print_first_calls(w, {&lazy, &openers[0], &openers[1], &openers[2], &openers[3]});
    std::printf(
        "\nThe context is the memory nobody allocated: %.0f MiB of GPU %d before the first\n"
        "cudaMalloc. Any call that needs a device creates the current device's context, and\n"
        "without cudaSetDevice that is device 0, whichever device the program meant.\n",
        lazy.lost(set_device_step, w.target_index()), w.target);
    if (why_not.empty())
        std::printf(
            "Under LAZY loading a module costs nothing until one of its kernels is first\n"
            "launched, and then all of it arrives, its __device__ storage included (%.0f MiB at\n"
            "the launch of a kernel that never touches the array); under EAGER it all comes\n"
            "with the context (%.0f MiB more at cudaSetDevice).\n",
            lazy.lost(first_launch_step, w.target_index()),
            eager.lost(set_device_step, w.target_index()) -
                lazy.lost(set_device_step, w.target_index()));
    std::printf("\n");

    claim_modules(ctx, w, lazy, eager, why_not);
    claim_first_calls(ctx, w, lazy, openers);
    claim_which_device(ctx, w, lazy, openers[0]);

    bool ok = lazy.result.succeeded() && lazy.mode == "LAZY" &&
              lazy.steps.size() == (why_not.empty() ? 6u : 2u);
    if (why_not.empty())
        ok = ok && eager.result.succeeded() && eager.mode == "EAGER" && eager.steps.size() == 6;
    for (const Run& run : openers) ok = ok && run.result.succeeded() && run.steps.size() == 3;
    return ctx.verdict(ok, format("%zu children took every step they were told to, each waiting "
                                  "for this process to read the free memory; the driver took "
                                  "the loading mode each was given",
                                  openers.size() + (why_not.empty() ? 2 : 1)));
}

TUTORIAL_SECTION(hidden_memory, run_hidden_memory);
TUTORIAL_CHILD(hidden_memory_steps, child_hidden_memory_steps);
