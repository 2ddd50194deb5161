// Checks of section checkpoint: runs ../checkpoint.cu's walkthrough on a child that runs the
// lesson's hold_pattern (role `checkpoint_holder`), prints the state each call left, the free
// device memory and the time of each call, and judges them. Then, each in a child of its own (role
// `checkpoint_prober`), the same calls on a process that holds managed memory and on one that has
// opened another process's IPC handle: what this driver answered is reported, never judged.
// Where the driver refuses the lock or the checkpoint with CUDA_ERROR_NOT_SUPPORTED (it does not
// checkpoint this process), the section says SKIP, naming the call.
//
// The child is killed and reaped, with a deadline, whatever happens: by ChildProcess when the
// walkthrough returns, by kill_running_holder when a CUDA call of the walkthrough failed and
// CU_CHECK ended this process, by PR_SET_PDEATHSIG (child.hpp) when this process was killed.
// TUTORIAL_CHECKPOINT_HOLD_S=N holds the child checkpointed N seconds before the restore and names
// it, so that .ci/checkpoint-kill-test can kill this process (kill -9) while it is.
#include "07_ipc/checkpoint.cu"

#include "../helpers/ipc_common.hpp"
#include "common/device.hpp"
#include "common/driver.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/text.hpp"
#include "common/timing.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>

using tutorial::Align;
using tutorial::format;

namespace {

// The calls, by name, where a refusal or a prober's answer names them.
constexpr const char* lock_call = "cuCheckpointProcessLock";
constexpr const char* checkpoint_call = "cuCheckpointProcessCheckpoint";
constexpr const char* restore_call = "cuCheckpointProcessRestore";
constexpr const char* unlock_call = "cuCheckpointProcessUnlock";
constexpr const char* hold_variable = "TUTORIAL_CHECKPOINT_HOLD_S";

// Room for the child besides its buffer: a CUDA context of its own (0.5 to 0.8 GiB on an H100).
constexpr std::size_t context_room = std::size_t{1} << 30;
// What the probes' holders hold: managed memory, or the prober's cudaMalloc memory opened by IPC.
constexpr std::size_t probe_bytes = std::size_t{8} << 20;
constexpr std::size_t probe_count = probe_bytes / sizeof(std::uint32_t);
// A holder gives up on a prober that is alive but sends nothing for this long.
constexpr double task_timeout_s = 30.0;

// What the entries say about memory they cannot checkpoint: nothing.
constexpr const char* unsupported_open =
    "the cuCheckpointProcess* entries name no kind of memory they cannot checkpoint; NVIDIA's "
    "cuda-checkpoint README (display driver 570) lists managed (UVM) and IPC memory as not "
    "supported, and says a process that meets one is not kept in a good state";
// What the restore promises, in its entry: "Restores a CUDA process specified by pid from its last
// checkpoint" (titled "Restore a CUDA process's GPU memory contents from its last checkpoint"; the
// checkpoint's brings them into host memory). The group's overview says these calls save and
// restore GPU state for full process checkpoints, and suspend a process to let others use the GPU:
// a process restored works again with the pointers it holds. So both are judged: the child's
// pointer names its device memory again (process_back), and its values are the checkpoint's
// (contents_back). A buffer that came back elsewhere is a process not restored.
const tutorial::Entry process_back{"Driver API reference: cuCheckpointProcessRestore",
                                   "CUDA process pid", "restores"};
const tutorial::Entry contents_back{"Driver API reference: cuCheckpointProcessRestore",
                                    "last checkpoint", "restores"};

std::string state_name(CUprocessState state) {
    switch (state) {
        case CU_PROCESS_STATE_RUNNING: return "CU_PROCESS_STATE_RUNNING";
        case CU_PROCESS_STATE_LOCKED: return "CU_PROCESS_STATE_LOCKED";
        case CU_PROCESS_STATE_CHECKPOINTED: return "CU_PROCESS_STATE_CHECKPOINTED";
        case CU_PROCESS_STATE_FAILED: return "CU_PROCESS_STATE_FAILED";
        // Newer toolkits name more states (CHECKPOINTING, RESTORING in 13.x): shown by number.
        default: return format("CUprocessState %d", static_cast<int>(state));
    }
}

// "" where this driver has the checkpoint entry points and answers for a process, else why not.
std::string why_no_checkpoint() {
    for (const char* name : {"cuCheckpointProcessGetState", "cuCheckpointProcessLock",
                             "cuCheckpointProcessCheckpoint", "cuCheckpointProcessRestore",
                             "cuCheckpointProcessUnlock"}) {
        const char* problem = "unknown";
        if (tutorial::find_driver_function(name, &problem) == nullptr)
            return format("%s: %s (checkpointing needs display driver 570 or newer)", name,
                          problem);
    }
    // Under compute-sanitizer the driver answers CUDA_ERROR_NOT_SUPPORTED for this process (seen
    // on driver 580, 2026-11-27), and the tool counts that answer as an error: not tried there.
    if (!tutorial::why_timing_not_judged().empty())
        return "checkpointing is not tried under compute-sanitizer, which stands between this "
               "process and the driver (the driver answers CUDA_ERROR_NOT_SUPPORTED there)";
    const auto cuCheckpointProcessGetState = DRIVER_FUNCTION(cuCheckpointProcessGetState);
    CUprocessState state = CU_PROCESS_STATE_RUNNING;
    const CUresult result = cuCheckpointProcessGetState(static_cast<int>(getpid()), &state);
    if (result == CUDA_ERROR_NOT_SUPPORTED)
        return "cuCheckpointProcessGetState on this process returned CUDA_ERROR_NOT_SUPPORTED: "
               "this driver or system does not checkpoint CUDA processes";
    return "";
}

// The walkthrough's child while it runs, or -1. A CUDA call of the walkthrough that fails ends
// this process with exit(): this handler, registered with atexit, then kills and reaps the child
// within child_reap_timeout_s, whatever state the driver left it in.
pid_t running_holder = -1;

void kill_running_holder() {
    if (running_holder <= 0) return;
    kill(-running_holder, SIGKILL);  // its process group (child.hpp), and so anything it started
    kill(running_holder, SIGKILL);
    int status = 0;
    const tutorial::Deadline deadline(tutorial::child_reap_timeout_s);
    pid_t done = 0;
    while ((done = waitpid(running_holder, &status, WNOHANG)) == 0 && deadline.seconds_left() > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::fprintf(stderr, "checkpoint: the child %d was killed (SIGKILL)%s\n",
                 static_cast<int>(running_holder),
                 done == running_holder ? " and reaped"
                                        : format(" and had not ended %.0f s later: lost",
                                                 tutorial::child_reap_timeout_s)
                                              .c_str());
    running_holder = -1;
}

// Watches the walkthrough's steps: the host time of each call (each returns when it is done).
// With a hold, it waits that long before the restore, having said which process is checkpointed.
class CallTimes : public tutorial::StepWatcher {
public:
    CallTimes(int child, double hold_s) : child_(child), hold_s_(hold_s) {
        tutorial::watch_steps(this);
    }
    ~CallTimes() override { tutorial::watch_steps(nullptr); }
    CallTimes(const CallTimes&) = delete;
    CallTimes& operator=(const CallTimes&) = delete;

    void begin(const char* name, cudaStream_t) override {
        if (hold_s_ > 0 && std::string(name) == restore_child.name) {
            std::printf("holding child %d checkpointed for %.0f s (%s)\n", child_, hold_s_,
                        hold_variable);
            std::fflush(stdout);
            std::this_thread::sleep_for(std::chrono::duration<double>(hold_s_));
        }
        name_ = name;
        timer_.restart();
    }
    void end() override { ms_[name_] = timer_.elapsed_ms(); }
    double ms(const tutorial::Step& step) const {
        const auto it = ms_.find(step.name);
        return it == ms_.end() ? 0.0 : it->second;
    }

private:
    int child_;
    double hold_s_;
    std::string name_;
    tutorial::HostTimer timer_;
    std::map<std::string, double> ms_;
};

struct Run {
    Found found;
    tutorial::ChildResult child;  // how the child ended
    double lock_ms = 0, checkpoint_ms = 0, restore_ms = 0, unlock_ms = 0;
};

// The walkthrough once, on a fresh child holding `bytes`.
Run checkpoint_a_child(int device, std::size_t bytes, double hold_s) {
    static const bool registered = std::atexit(kill_running_holder) == 0;
    (void)registered;
    Run run;
    tutorial::ChildProcess child("checkpoint_holder",
                                 {std::to_string(device), std::to_string(bytes)});
    running_holder = child.pid();
    {
        CallTimes times(child.pid(), hold_s);
        run.found = walkthrough(child);
        run.lock_ms = times.ms(lock_child);
        run.checkpoint_ms = times.ms(checkpoint_child);
        run.restore_ms = times.ms(restore_child);
        run.unlock_ms = times.ms(unlock_child);
    }
    run.child = child.wait(30.0);  // killed and reaped should it not end by then
    running_holder = -1;
    return run;
}

// Free device memory gained while the child was checkpointed, and lost again at the restore,
// against the child's buffer.
double freed_ratio(const Found& f, std::size_t bytes) {
    return (static_cast<double>(f.free_checkpointed) - static_cast<double>(f.free_locked)) /
           static_cast<double>(bytes);
}
double taken_back_ratio(const Found& f, std::size_t bytes) {
    return (static_cast<double>(f.free_checkpointed) - static_cast<double>(f.free_restored)) /
           static_cast<double>(bytes);
}

std::string signed_mib(std::size_t now, std::size_t before) {
    const long long change = (static_cast<long long>(now) - static_cast<long long>(before)) >> 20;
    return format("%zu MiB (%+lld)", now >> 20, change);
}

void print_run(const Run& run) {
    const Found& f = run.found;
    tutorial::Table table({{"step"},
                           {"the child's state after it"},
                           {"free device memory", Align::right},
                           {"host ms", Align::right}});
    table.named("states");
    table.add_row({"(before: the child holds its pattern)", state_name(f.states[0]), "", ""});
    table.add_row({lock_child.name, state_name(f.states[1]), format("%zu MiB", f.free_locked >> 20),
                   format("%.1f", run.lock_ms)});
    table.add_row({checkpoint_child.name, state_name(f.states[2]),
                   signed_mib(f.free_checkpointed, f.free_locked),
                   format("%.1f", run.checkpoint_ms)});
    table.add_row({restore_child.name, state_name(f.states[3]),
                   signed_mib(f.free_restored, f.free_checkpointed),
                   format("%.1f", run.restore_ms)});
    table.add_row({unlock_child.name, state_name(f.states[4]), "", format("%.1f", run.unlock_ms)});
    table.print();
}

// Each call's entry says, in a sentence of its own, the state a successful return leaves the
// process in: LOCKED after the lock, CHECKPOINTED after the checkpoint, LOCKED after the restore,
// RUNNING after the unlock. One claim per call, each on the state before and after it.
void claim_states(tutorial::Context& ctx, const Found& f) {
    const auto seen = [&](int before) {
        return format("%s, then %s", state_name(f.states[before]).c_str(),
                      state_name(f.states[before + 1]).c_str());
    };
    const auto went = [&](int before, CUprocessState from, CUprocessState to) {
        return f.states[before] == from && f.states[before + 1] == to;
    };
    const char* other = "a call returned CUDA_SUCCESS and left another state than its entry names";
    ctx.claim(tutorial::documented(
        "lock_state", "locking leaves the running child locked",
        went(0, CU_PROCESS_STATE_RUNNING, CU_PROCESS_STATE_LOCKED), seen(0), other,
        tutorial::Entry{"Driver API reference: cuCheckpointProcessLock", "successful LOCKED",
                        "will"}));
    ctx.claim(tutorial::documented(
        "checkpoint_states", "...then checkpointing leaves it checkpointed",
        went(1, CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_CHECKPOINTED), seen(1), other,
        tutorial::Entry{"Driver API reference: cuCheckpointProcessCheckpoint",
                        "successful CHECKPOINTED", "will"}));
    ctx.claim(tutorial::documented(
        "restore_states", "restoring leaves the checkpointed child locked again",
        went(2, CU_PROCESS_STATE_CHECKPOINTED, CU_PROCESS_STATE_LOCKED), seen(2), other,
        tutorial::Entry{"Driver API reference: cuCheckpointProcessRestore", "successful LOCKED",
                        "will"}));
    ctx.claim(tutorial::documented(
        "unlock_state", "...then unlocking lets it run again",
        went(3, CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_RUNNING), seen(3), other,
        tutorial::Entry{"Driver API reference: cuCheckpointProcessUnlock", "successful RUNNING",
                        "will"}));
}

void claim_memory(tutorial::Context& ctx, const Found& f, std::size_t bytes,
                  const std::function<Found()>& again) {
    ctx.claim(tutorial::at_least("checkpoint_frees",
                                 "a checkpointed child's device memory is free for others (memory "
                                 "freed / its buffer)",
                                 freed_ratio(f, bytes), 0.8, "x",
                                 "the driver kept the child's memory on the GPU, or another "
                                 "process allocated device memory meanwhile")
                  .again([&] { return freed_ratio(again(), bytes); }));
    ctx.claim(tutorial::at_least("restore_takes_back",
                                 "the restore takes it back (free memory lost / the child's "
                                 "buffer)",
                                 taken_back_ratio(f, bytes), 0.8, "x",
                                 "the restore left the child's memory in host memory, or another "
                                 "process freed device memory meanwhile")
                  .again([&] { return taken_back_ratio(again(), bytes); }));
}

// After the unlock: does the child's pointer name its device memory again, and did the child read
// its pattern back through it? Both are the restore's promise (contents_back, process_back above).
void claim_back(tutorial::Context& ctx, const Found& f, std::size_t bytes) {
    const bool there = f.child_read && f.still_device == 1;  // 0 also where it did not answer
    ctx.claim(tutorial::documented(
        "address_kept",
        "after the unlock the restored child's pointer names its device memory again",
        there,
        !f.child_read ? "the child did not answer"
                      : format("cudaPointerGetAttributes(%p): %s", f.address_after,
                               f.still_device ? "cudaMemoryTypeDevice" : "not device memory"),
        "the restore did not bring the child's memory back where its pointer names it",
        process_back));
    ctx.claim(tutorial::documented(
        "pattern_back",
        "...and the child reads its pattern back there, every value kept through checkpoint and "
        "restore",
        there && f.wrong == 0,
        there ? format("%zu of %zu values wrong at %p", f.wrong, bytes / sizeof(std::uint32_t),
                       f.address_after)
              : std::string("not read: the pointer names no device memory (a kernel would fault "
                            "there)"),
        "the checkpoint or the restore lost or changed the child's device memory",
        contents_back));
}

// A lock, checkpoint or restore the driver refused. The entries promise only what a successful
// return leaves (CUDA_ERROR_NOT_SUPPORTED is among the answers each lists; the lock's entry also
// describes a timeout; a container or a permission may refuse too): nothing to teach here, so the
// section says what was refused and SKIPs.
tutorial::Result refused(tutorial::Context& ctx, const Run& run) {
    const Found& f = run.found;
    const bool at_lock = f.locked != CUDA_SUCCESS;
    const bool at_checkpoint = !at_lock && f.checkpointed != CUDA_SUCCESS;
    const CUresult result = at_lock ? f.locked : at_checkpoint ? f.checkpointed : f.restored;
    const char* call = at_lock ? lock_call : at_checkpoint ? checkpoint_call : restore_call;
    tutorial::print_child_output(run.child);
    return ctx.skip(format("%s returned %s for the child: this driver or system does not "
                           "checkpoint this process here (the child was %s)",
                           call, tutorial::driver_error_name(result),
                           at_lock         ? "left running"
                           : at_checkpoint ? "unlocked again"
                                           : "left checkpointed, then ended"));
}

// What a prober child printed: the answer after "-> " on the line of `call`, up to a ';'.
std::string answer_of(const tutorial::ChildResult& result, const std::string& call) {
    const std::string answer = tutorial::child_answer(result, call);
    return answer.substr(0, answer.find(';'));
}

struct Probe {
    tutorial::ChildResult result;
    std::string lock, checkpoint, restore, unlock, read;
};

Probe probe(int device, const char* kind) {
    Probe p;
    p.result = tutorial::run_child("checkpoint_prober", {std::to_string(device), kind}, "", 25.0);
    tutorial::print_child_output(p.result);
    p.lock = answer_of(p.result, lock_call);
    p.checkpoint = answer_of(p.result, checkpoint_call);
    p.restore = answer_of(p.result, restore_call);
    p.unlock = answer_of(p.result, unlock_call);
    p.read = answer_of(p.result, "the holder read");
    return p;
}

std::string seen_of(const Probe& p) {
    if (p.lock.empty()) return "not tried";
    std::string seen = "lock: " + p.lock + "; checkpoint: " + p.checkpoint;
    if (p.checkpoint == "CUDA_SUCCESS")
        seen += "; restore: " + p.restore + "; unlock: " + p.unlock + "; read back: " + p.read;
    return seen;
}

// "" when the prober got as far as an answer from cuCheckpointProcessCheckpoint.
std::string why_probe_unanswered(const Probe& p) {
    if (p.checkpoint.rfind("CUDA_", 0) == 0) return "";
    if (p.lock.rfind("CUDA_", 0) == 0 && p.lock != "CUDA_SUCCESS")
        return "the lock was refused (" + p.lock + "), so the checkpoint was never asked";
    if (p.lock == "CUDA_SUCCESS")
        return "cuCheckpointProcessCheckpoint never answered: the prober " + p.result.describe();
    return "the prober never asked for the checkpoint: it " + p.result.describe();
}

void probe_unsupported(tutorial::Context& ctx) {
    std::printf(
        "\nThe same calls, each in a child of its own (a prober), on a holder with %s of managed\n"
        "memory (cudaMallocManaged, on the GPU), then on a holder that has opened the prober's\n"
        "cudaMalloc memory through an IPC handle:\n",
        tutorial::format_bytes(probe_bytes).c_str());
    const std::string room =
        tutorial::why_too_little_free(2 * context_room, "for a prober and its holder");
    Probe managed, ipc;
    if (room.empty()) {
        managed = probe(ctx.device, "managed");
        ipc = probe(ctx.device, "ipc");
    }
    std::printf("\n");
    ctx.claim(tutorial::observed("managed_memory",
                                 "a process holding managed memory is not checkpointed: "
                                 "cuCheckpointProcessCheckpoint refuses it",
                                 managed.checkpoint != "CUDA_SUCCESS", seen_of(managed),
                                 unsupported_open),
              room.empty() ? why_probe_unanswered(managed) : room);
    // Seen on 2 x H100, driver 580.159.04 (2026-11-27): the checkpoint was accepted and the
    // restore refused (CUDA_ERROR_INVALID_VALUE), so the process could not get its memory back.
    ctx.claim(tutorial::observed("ipc_memory",
                                 "a process that opened another's IPC handle is checkpointed, "
                                 "but cannot be restored: cuCheckpointProcessRestore refuses it",
                                 ipc.checkpoint == "CUDA_SUCCESS" && ipc.restore != "CUDA_SUCCESS",
                                 seen_of(ipc), unsupported_open),
              room.empty() ? why_probe_unanswered(ipc) : room);
}

double hold_seconds() {
    const char* text = std::getenv(hold_variable);
    return text == nullptr ? 0.0 : std::atof(text);
}

}  // namespace

// Child role `checkpoint_holder` (args: device, bytes): the lesson's child.
int child_checkpoint_holder(const std::vector<std::string>& args) {
    return hold_pattern(std::atoi(args.at(0).c_str()),
                        std::strtoull(args.at(1).c_str(), nullptr, 10));
}

namespace {

// A holder of the probes, once it holds `data`: waits for "check" (with a deadline), then reads
// its values again.
int read_again(const std::uint32_t* data) {
    std::string line;
    tutorial::read_input_line(line, task_timeout_s);
    const std::size_t wrong = mismatches_on_device(data, probe_count, seed);
    std::printf("read %p: %zu wrong\n", static_cast<const void*>(data), wrong);
    return wrong == 0 ? 0 : 1;
}

// The prober's calls on its holder, each answer on a line "<call> -> <result>; ...". False where
// one failed: the holder is then in whatever state the driver left it.
bool try_the_calls(tutorial::ChildProcess& holder) {
    const auto cuCheckpointProcessGetState = DRIVER_FUNCTION(cuCheckpointProcessGetState);
    const auto cuCheckpointProcessLock = DRIVER_FUNCTION(cuCheckpointProcessLock);
    const auto cuCheckpointProcessCheckpoint = DRIVER_FUNCTION(cuCheckpointProcessCheckpoint);
    const auto cuCheckpointProcessRestore = DRIVER_FUNCTION(cuCheckpointProcessRestore);
    const auto cuCheckpointProcessUnlock = DRIVER_FUNCTION(cuCheckpointProcessUnlock);
    const int pid = holder.pid();
    const auto answer = [&](const char* call, CUresult result) {
        CUprocessState state = CU_PROCESS_STATE_FAILED;
        const CUresult asked = cuCheckpointProcessGetState(pid, &state);
        std::printf("%s -> %s; the holder is then %s\n", call, tutorial::driver_error_name(result),
                    asked == CUDA_SUCCESS ? state_name(state).c_str()
                                          : tutorial::driver_error_name(asked));
        return result == CUDA_SUCCESS;
    };
    CUcheckpointLockArgs lock_args{};
    lock_args.timeoutMs = 5000;
    CUcheckpointCheckpointArgs checkpoint_args{};
    CUcheckpointRestoreArgs restore_args{};
    CUcheckpointUnlockArgs unlock_args{};
    if (!answer(lock_call, cuCheckpointProcessLock(pid, &lock_args)) ||
        !answer(checkpoint_call, cuCheckpointProcessCheckpoint(pid, &checkpoint_args)) ||
        !answer(restore_call, cuCheckpointProcessRestore(pid, &restore_args)) ||
        !answer(unlock_call, cuCheckpointProcessUnlock(pid, &unlock_args)))
        return false;
    holder.send("check\n");
    std::string line;
    const bool read = holder.read_line(line, 5.0);
    std::printf("the holder read -> %s\n", read ? line.c_str() : "(nothing within 5 s)");
    return true;
}

}  // namespace

// Child role `checkpoint_managed_holder` (args: device): holds managed memory the GPU wrote.
int child_checkpoint_managed_holder(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, probe_bytes));
    fill_on_device(data, probe_count, seed);  // its pages are on the GPU now
    std::printf("holds %zu bytes of managed memory at %p\n", probe_bytes,
                static_cast<void*>(data));
    const int code = read_again(data);
    CUDA_CHECK(cudaFree(data));
    return code;
}

// Child role `checkpoint_ipc_holder` (args: device): opens the handle on its stdin and holds it.
int child_checkpoint_ipc_holder(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    cudaIpcMemHandle_t handle{};  // the handle's 64 bytes, as they are
    if (tutorial::read_input(&handle, sizeof handle, task_timeout_s) != tutorial::Input::received) {
        std::printf("no handle arrived\n");
        return 4;
    }
    void* opened = nullptr;
    CUDA_CHECK(cudaIpcOpenMemHandle(&opened, handle, cudaIpcMemLazyEnablePeerAccess));
    std::printf("holds %zu bytes of another process's memory, opened at %p\n", probe_bytes,
                opened);
    const int code = read_again(static_cast<const std::uint32_t*>(opened));
    CUDA_CHECK(cudaIpcCloseMemHandle(opened));
    return code;
}

// Child role `checkpoint_prober` (args: device, "managed" or "ipc"): starts a holder of that kind
// (for "ipc", exports its own cudaMalloc memory to it), tries the four calls on it and says what
// each returned. A holder the calls left locked, checkpointed or failed is killed and reaped.
int child_checkpoint_prober(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const bool ipc = args.at(1) == "ipc";
    std::uint32_t* exported = nullptr;
    tutorial::ChildProcess holder(ipc ? "checkpoint_ipc_holder" : "checkpoint_managed_holder",
                                  {args.at(0)});
    if (ipc) {
        CUDA_CHECK(cudaMalloc(&exported, probe_bytes));
        fill_on_device(exported, probe_count, seed);
        cudaIpcMemHandle_t handle{};
        CUDA_CHECK(cudaIpcGetMemHandle(&handle, exported));
        holder.send(std::string(reinterpret_cast<const char*>(&handle), sizeof handle));
    }
    std::string line;
    const bool holds = holder.read_line(line, 10.0) && line.rfind("holds", 0) == 0;
    std::printf("holder %d: %s\n", static_cast<int>(holder.pid()), line.c_str());
    const bool went = holds && try_the_calls(holder);
    // A holder still locked or checkpointed cannot finish: 2 s, then SIGKILL.
    std::printf("the holder %s\n", holder.wait(went ? 5.0 : 2.0).describe().c_str());
    if (exported != nullptr) CUDA_CHECK(cudaFree(exported));
    return holds ? 0 : 3;
}

tutorial::Result run_checkpoint(tutorial::Context& ctx) {
    if (const std::string why = why_no_checkpoint(); !why.empty()) return ctx.skip(why);
    const std::size_t bytes = ctx.size_or(tutorial::fit_in_free_memory(
        ctx.quick() ? (std::size_t{64} << 20) : (std::size_t{256} << 20), 0.25, 2 << 20));
    if (const std::string why = tutorial::why_too_little_free(
            bytes + context_room, "for the child's buffer and its CUDA context");
        !why.empty())
        return ctx.skip(why);
    const double hold_s = hold_seconds();
    std::printf(
        "A child holds %s of cudaMalloc memory with a pattern in it. This process locks it,\n"
        "checkpoints it, restores it and unlocks it (cuCheckpointProcess*, naming its process\n"
        "id), reading its state after each call and the free device memory around the\n"
        "checkpoint (cudaMemGetInfo: the whole GPU's); then the child reads its buffer again.\n\n",
        tutorial::format_bytes(bytes).c_str());
    const Run run = checkpoint_a_child(ctx.device, bytes, hold_s);
    const Found& f = run.found;
    if (!f.child_ready) {
        tutorial::print_child_output(run.child);
        return ctx.verdict(false, "the child never said where its pattern is: it " +
                                      run.child.describe());
    }
    if (f.locked != CUDA_SUCCESS || f.checkpointed != CUDA_SUCCESS || f.restored != CUDA_SUCCESS)
        return refused(ctx, run);
    print_run(run);
    const double freed = freed_ratio(f, bytes);
    std::printf(
        "\nCheckpointed, the child gave back %.0f MiB: %.2f times its buffer, since its context's\n"
        "memory went too. It took %.0f ms to copy out (%.1f GB/s for the buffer alone) and\n"
        "%.0f ms to come back. The child %s; its pointer %p (before: %p) was %s.\n\n",
        freed * static_cast<double>(bytes) / (1 << 20), freed, run.checkpoint_ms,
        tutorial::gb_per_s(bytes, run.checkpoint_ms), run.restore_ms,
        run.child.describe().c_str(), f.address_after, f.address,
        f.still_device ? "device memory again, and it read its buffer there"
                       : "not device memory, so it did not read its buffer");
    if (!run.child.succeeded()) tutorial::print_child_output(run.child);
    claim_states(ctx, f);
    claim_memory(ctx, f, bytes, [&] { return checkpoint_a_child(ctx.device, bytes, 0).found; });
    claim_back(ctx, f, bytes);
    probe_unsupported(ctx);
    // The verdict rests on the restore's promise: the child's pointer names its device memory
    // again (address_kept) and every value is back (pattern_back); a moved buffer is a FAIL.
    const bool there = f.child_read && f.still_device == 1;
    return ctx.verdict(
        there && f.wrong == 0 && run.child.succeeded(),
        format("the child, checkpointed and restored, %s %s",
               there ? format("answered with %zu wrong values of its %s and", f.wrong,
                              tutorial::format_bytes(bytes).c_str())
                           .c_str()
               : f.child_read ? "found its pointer naming no device memory, and"
                              : "did not answer, and",
               run.child.describe().c_str()));
}

TUTORIAL_SECTION(checkpoint, run_checkpoint);
TUTORIAL_CHILD(checkpoint_holder, child_checkpoint_holder);
TUTORIAL_CHILD(checkpoint_prober, child_checkpoint_prober);
TUTORIAL_CHILD(checkpoint_managed_holder, child_checkpoint_managed_holder);
TUTORIAL_CHILD(checkpoint_ipc_holder, child_checkpoint_ipc_holder);
