// Checks of section pitfalls: a child process runs the walkthrough of ../pitfalls.cu, which makes
// every misuse (and starts the process that opens the interior handle, this program in the child
// role `peek_worker`), and prints one line per answer; the parent judges them. One refusal is
// documented with its error (a pool of host memory asked for a handle type: the cudaMemPoolCreate
// entry names cudaErrorInvalidValue); the others step outside a precondition whose entry names no
// error, so what they return is this driver's answer, reported as observed.
#include "07_ipc/pitfalls.cu"

#include "../helpers/ipc_common.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::ChildResult;
using tutorial::run_child;

// Child role `peek_worker` (args: device): the lesson's process that opens the interior handle.
int child_peek_worker(const std::vector<std::string>& args) {
    return peek_worker(std::atoi(args.at(0).c_str()));
}

namespace {

// The lines the child prints, one per misuse (the parent finds each answer by its text).
constexpr const char* own_line = "cudaIpcOpenMemHandle in the process that made the handle";
constexpr const char* interior_line = "cudaIpcGetMemHandle(4 KiB into a cudaMalloc allocation)";
constexpr const char* opened_line = "  ...opened in another process, it points to";
constexpr const char* managed_line = "cudaIpcGetMemHandle(managed memory)";
constexpr const char* no_type_line = "cuMemExportToShareableHandle without a requested handle type";
constexpr const char* legacy_vmm_line = "cudaIpcGetMemHandle(mapped cuMemCreate memory)";
constexpr const char* timed_line = "cudaEventCreateWithFlags(cudaEventInterprocess alone)";
constexpr const char* timed_handle_line = "  ...cudaIpcGetEventHandle on that event";
constexpr const char* host_pool_line = "cudaMemPoolCreate(host memory, POSIX fd handle type)";
constexpr int misuses = 8;  // the lines above, less the one that follows up on an event

void print_answer(const char* what, const char* answer) {
    std::printf("%-58s -> %s\n", what, answer);
}

// Where a handle made from an interior pointer led, by the first value another process found.
const char* where_interior_leads(const Found& f) {
    if (f.legacy.interior != cudaSuccess) return "(no handle to open)";
    if (!f.peeked) return "(the opener failed)";
    if (f.first_value == pattern(0, seed)) {
        return "the start of the allocation: the 4 KiB offset is lost";
    }
    return f.first_value == pattern(1024, seed) ? "the interior address" : "somewhere unexpected";
}

}  // namespace

// Child role `ipc_misuse` (args: device): the walkthrough, one line per answer; exit 0 once all
// were made. What each returns is judged by the parent, which knows which refusal is documented
// and which only observed.
int child_ipc_misuse(const std::vector<std::string>& args) {
    const int device = std::atoi(args.at(0).c_str());
    CUDA_CHECK(cudaSetDevice(device));
    const Found f = walkthrough(device, {"/proc/self/exe", tutorial::child_flag});
    print_answer(own_line, cudaGetErrorName(f.legacy.own));
    print_answer(interior_line, cudaGetErrorName(f.legacy.interior));
    print_answer(opened_line, where_interior_leads(f));
    print_answer(managed_line, cudaGetErrorName(f.legacy.of_managed));
    print_answer(no_type_line, tutorial::driver_error_name(f.vmm.exported));
    print_answer(legacy_vmm_line, cudaGetErrorName(f.vmm.of_vmm));
    print_answer(timed_line, cudaGetErrorName(f.event.created));
    if (f.event.created == cudaSuccess) {
        print_answer(timed_handle_line, cudaGetErrorName(f.event.handle));
    }
    print_answer(host_pool_line, cudaGetErrorName(f.host_pool));
    return 0;
}

namespace {

// The answers the child gave, by line.
struct Answers {
    std::string own, interior, opened, managed, no_type, legacy_vmm, event, host_pool;
    int given = 0;  // lines with an answer
};

Answers read_answers(const ChildResult& child) {
    Answers a;
    a.own = tutorial::child_answer(child, own_line);
    a.interior = tutorial::child_answer(child, interior_line);
    a.opened = tutorial::child_answer(child, opened_line);
    a.managed = tutorial::child_answer(child, managed_line);
    a.no_type = tutorial::child_answer(child, no_type_line);
    a.legacy_vmm = tutorial::child_answer(child, legacy_vmm_line);
    const std::string created = tutorial::child_answer(child, timed_line);
    a.event = created == "cudaSuccess"
                  ? "created, then the handle: " + tutorial::child_answer(child, timed_handle_line)
                  : "creating it: " + created;
    a.host_pool = tutorial::child_answer(child, host_pool_line);
    const std::string* answers[] = {&a.own,     &a.interior,   &a.opened, &a.managed,
                                    &a.no_type, &a.legacy_vmm, &created,  &a.host_pool};
    for (const std::string* answer : answers) a.given += answer->rfind("(no ", 0) == 0 ? 0 : 1;
    return a;
}

// The misuses whose entries name no error: what this driver returned, never judged.
void claim_observed(tutorial::Context& ctx, const Answers& a) {
    ctx.claim(tutorial::observed(
        "own_handle_refused",
        "a process opening its own legacy handle is refused with cudaErrorDeviceUninitialized",
        a.own == "cudaErrorDeviceUninitialized", "it got " + a.own,
        "the cudaIpcOpenMemHandle entry is for handles exported by another process and names no "
        "error for a process's own"));
    ctx.claim(tutorial::observed(
        "interior_opens_at_start",
        "a handle made from an interior pointer is accepted, and opens at the allocation's start",
        a.interior == "cudaSuccess" && a.opened.rfind("the start of the allocation", 0) == 0,
        a.interior + "; another process found " + a.opened,
        "the cudaIpcGetMemHandle entry asks for the allocation's base pointer and says nothing "
        "of any other"));
    ctx.claim(tutorial::observed(
        "managed_and_untyped_vmm_refused",
        "managed memory and VMM memory with no handle type are refused, with invalid-value errors",
        a.managed == "cudaErrorInvalidValue" && a.no_type == "CUDA_ERROR_INVALID_VALUE",
        "managed: " + a.managed + "; VMM: " + a.no_type,
        "the cudaIpcGetMemHandle entry asks for cudaMalloc memory, and the "
        "cuMemExportToShareableHandle entry names no error for memory created without a handle "
        "type"));
    ctx.claim(tutorial::observed(
        "vmm_refused_by_legacy",
        "cuMemCreate memory is refused by the legacy cudaIpcGetMemHandle, even mapped",
        a.legacy_vmm == "cudaErrorInvalidValue", "it got " + a.legacy_vmm,
        "the Guide's Virtual Memory Management appendix (E.3.1) says the legacy IPC calls do not "
        "support cuMemCreate memory, and names no error for trying"));
    ctx.claim(tutorial::observed(
        "timed_event_refused",
        "an interprocess event without cudaEventDisableTiming is refused when created",
        a.event == "creating it: cudaErrorInvalidValue", a.event,
        "the cudaEventCreateWithFlags entry requires cudaEventDisableTiming with "
        "cudaEventInterprocess and names no error for leaving it out"));
}

}  // namespace

tutorial::Result run_pitfalls(tutorial::Context& ctx) {
    if (const std::string why = why_no_legacy_ipc(ctx.device); !why.empty()) return ctx.skip(why);
    std::printf("Each call below is used the wrong way, in a child process:\n");
    const ChildResult child = run_child("ipc_misuse", {std::to_string(ctx.device)});
    tutorial::print_child_output(child);
    std::printf("The child %s.\n", child.describe().c_str());
    std::printf(
        "\nNot provoked here: a master that frees memory while a worker still has it open. For\n"
        "a legacy IPC handle the cudaIpcOpenMemHandle entry calls that undefined; a VMM import\n"
        "holds its own reference (the cuMemRelease entry), so the memory stays allocated until\n"
        "the importer releases it, but the master no longer knows about it. Either way, have\n"
        "the workers close their handles (and say so) before the master frees. And from chapter\n"
        "03: a worker made with fork() but no exec() could not use CUDA there.\n\n");
    const Answers a = read_answers(child);
    // Documented, with its error: the cudaMemPoolCreate entry refuses a handle type for a pool of
    // host memory by name. Where the device has no host pools at all, another refusal may come
    // first.
    const bool host_pools =
        tutorial::device_attribute(ctx.device, cudaDevAttrHostMemoryPoolsSupported) == 1;
    ctx.claim(
        tutorial::documented_error(
            "host_pool_refused", "a pool of host memory created with a handle type is refused",
            a.host_pool, "cudaErrorInvalidValue",
            "this driver accepts an exportable pool of host memory",
            tutorial::Entry{"Runtime API reference: cudaMemPoolCreate",
                            "cudaMemLocationTypeHost handleTypes cudaErrorInvalidValue", "will"}),
        host_pools ? "" : "this device has no host memory pools (hostMemoryPoolsSupported = 0)");
    claim_observed(ctx, a);
    return ctx.verdict(child.succeeded() && a.given == misuses,
                       tutorial::format("the child made all %d misuses and reported what each "
                                        "returned (%d answers); the documented refusal is judged "
                                        "above, the others are this driver's",
                                        misuses, a.given));
}

TUTORIAL_SECTION(pitfalls, run_pitfalls);
TUTORIAL_CHILD(ipc_misuse, child_ipc_misuse);
TUTORIAL_CHILD(peek_worker, child_peek_worker);
