// Section checkpoint: can a running process's GPU memory leave the GPU and come back? A parent
// locks a child that holds a pattern in device memory, checkpoints it, restores and unlocks it.
// Alone: nvcc -std=c++17 -I. 07_ipc/checkpoint.cu common/standalone.cu -o checkpoint
// Built alone, from the course's folder (mkdir -p build first), then ./build/checkpoint:
//   nvcc -std=c++17 -I. 07_ipc/checkpoint.cu common/standalone.cu -o build/checkpoint
//   (or in 07_ipc/: nvcc -std=c++17 -I.. checkpoint.cu ../common/standalone.cu
//       -o ../build/checkpoint)  (on the same line)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
namespace {

constexpr std::uint32_t seed = 7;

// What the parent saw: the child's state before the lock and after each call, the free device
// memory around the checkpoint, and what the child read back after the unlock.
struct Found {
    bool child_ready = false;        // the child said where its pattern is...
    void* address = nullptr;         // ...at this address, in the child
    CUprocessState states[5] = {};   // before the lock; after lock, checkpoint, restore, unlock
    // What the lock, the checkpoint and the restore returned: a system that does not checkpoint
    // this process refuses one of them.
    CUresult locked = CUDA_SUCCESS, checkpointed = CUDA_SUCCESS, restored = CUDA_SUCCESS;
    std::size_t free_locked = 0;     // cudaMemGetInfo: locked, the child's memory on the GPU
    std::size_t free_checkpointed = 0;
    std::size_t free_restored = 0;
    bool child_read = false;         // the child answered after the unlock: its pointer...
    void* address_after = nullptr;   // ...this one, the address it had all along...
    int still_device = 0;            // ...named device memory (1), so it read its buffer there,
    std::size_t wrong = 0;           // ...and found this many values wrong (0 when not read)
};

// The child's side. It puts a pattern in device memory, says where on its standard output, then
// waits for a line on its standard input; meanwhile the parent checkpoints and restores it. It
// makes no CUDA call while it waits (a locked process's next call would block). Then it asks
// what its pointer is now: a process restored works again with the pointers it holds, so it
// should name the child's device memory, and the child reads it through that pointer and counts
// the values that are not the pattern. (A pointer that named no device memory would make a
// kernel fault: the child then reads nothing.)
int hold_pattern(int device, std::size_t bytes) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    CUDA_CHECK(cudaSetDevice(device));
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMalloc(&data, bytes));
    fill_on_device(data, count, seed);  // waits for the kernel: nothing is left in flight
    std::cout << "holds " << bytes << " bytes at " << static_cast<void*>(data) << std::endl;
    std::string line;
    std::getline(std::cin, line);  // "check": the parent has restored and unlocked this process
    cudaPointerAttributes attributes{};
    const cudaError_t asked = cudaPointerGetAttributes(&attributes, data);
    if (asked != cudaSuccess) (void)cudaGetLastError();  // not memory CUDA knows here any more
    const bool there = asked == cudaSuccess && attributes.type == cudaMemoryTypeDevice;
    const std::size_t wrong = there ? mismatches_on_device(data, count, seed) : 0;
    std::cout << "read " << static_cast<void*>(data) << ", device memory " << there << ": "
              << wrong << " wrong" << std::endl;
    if (there) CUDA_CHECK(cudaFree(data));
    return wrong == 0 ? 0 : 1;
}

// The walkthrough's steps, one per call on the child, each timed wherever steps are watched (each
// call returns when it is done).
constexpr tutorial::Step lock_child{"the child is locked (cuCheckpointProcessLock)"};
constexpr tutorial::Step checkpoint_child{
    "its GPU memory is copied out and freed (cuCheckpointProcessCheckpoint)"};
constexpr tutorial::Step restore_child{"its GPU memory comes back (cuCheckpointProcessRestore)"};
constexpr tutorial::Step unlock_child{"the child runs again (cuCheckpointProcessUnlock)"};

// The parent's side. `child` is a process already started that runs hold_pattern: pid(), its
// standard output by read_line(line, seconds), its standard input by send(text). Each call names
// the child by its process id; cuCheckpointProcessGetState reads back the state it left.
template <typename Child>
Found walkthrough(Child& child) {
    const auto cuCheckpointProcessGetState = DRIVER_FUNCTION(cuCheckpointProcessGetState);
    const auto cuCheckpointProcessLock = DRIVER_FUNCTION(cuCheckpointProcessLock);
    const auto cuCheckpointProcessCheckpoint = DRIVER_FUNCTION(cuCheckpointProcessCheckpoint);
    const auto cuCheckpointProcessRestore = DRIVER_FUNCTION(cuCheckpointProcessRestore);
    const auto cuCheckpointProcessUnlock = DRIVER_FUNCTION(cuCheckpointProcessUnlock);
    const int pid = child.pid();
    std::size_t total = 0;
    Found found;

    // 1. The child fills its buffer and says where it is; it is running.
    std::string line;
    found.child_ready = child.read_line(line, 60.0) &&
                        std::sscanf(line.c_str(), "holds %*s bytes at %p", &found.address) == 1;
    if (!found.child_ready) return found;
    CU_CHECK(cuCheckpointProcessGetState(pid, &found.states[0]));

    // 2. Lock: from now on the child's CUDA calls block. If the lock cannot be had within the
    //    timeout, the child is left running. A driver or system that does not checkpoint this
    //    process refuses the lock or the checkpoint (CUDA_ERROR_NOT_SUPPORTED is among the answers
    //    each entry lists): the walkthrough then returns what the call answered.
    CUcheckpointLockArgs lock_args{};  // the reserved fields must be zero
    lock_args.timeoutMs = 10000;
    {
        const tutorial::During during(lock_child);
        found.locked = cuCheckpointProcessLock(pid, &lock_args);
    }
    if (found.locked != CUDA_SUCCESS) return found;  // the child is left running
    CU_CHECK(cuCheckpointProcessGetState(pid, &found.states[1]));
    CUDA_CHECK(cudaMemGetInfo(&found.free_locked, &total));

    // 3. Checkpoint: the contents of the child's device memory are copied into host memory, and
    //    its allocations and device handles are released: the GPU memory is free for others.
    CUcheckpointCheckpointArgs checkpoint_args{};
    CUcheckpointUnlockArgs unlock_args{};
    {
        const tutorial::During during(checkpoint_child);
        found.checkpointed = cuCheckpointProcessCheckpoint(pid, &checkpoint_args);
    }
    if (found.checkpointed != CUDA_SUCCESS) {  // refused: unlock the child, still on the GPU
        CU_CHECK(cuCheckpointProcessUnlock(pid, &unlock_args));
        return found;
    }
    CU_CHECK(cuCheckpointProcessGetState(pid, &found.states[2]));
    CUDA_CHECK(cudaMemGetInfo(&found.free_checkpointed, &total));

    // 4. Restore: back onto the GPU it came from (no GPU pairs given), still locked. A restore
    //    needs persistence mode or a process that has called cuInit, as this one has.
    CUcheckpointRestoreArgs restore_args{};
    {
        const tutorial::During during(restore_child);
        found.restored = cuCheckpointProcessRestore(pid, &restore_args);
    }
    if (found.restored != CUDA_SUCCESS) return found;  // the child stays checkpointed, locked
    CU_CHECK(cuCheckpointProcessGetState(pid, &found.states[3]));
    CUDA_CHECK(cudaMemGetInfo(&found.free_restored, &total));

    // 5. Unlock: the child's CUDA calls run again.
    {
        const tutorial::During during(unlock_child);
        CU_CHECK(cuCheckpointProcessUnlock(pid, &unlock_args));
    }
    CU_CHECK(cuCheckpointProcessGetState(pid, &found.states[4]));

    // 6. The child asks what the pointer it kept all along is now, and reads its buffer there.
    child.send("check\n");
    found.child_read = child.read_line(line, 60.0) &&
                       std::sscanf(line.c_str(), "read %p, device memory %d: %zu wrong",
                                   &found.address_after, &found.still_device, &found.wrong) == 3;
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include "common/process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

// Alone, the child is this program again, `checkpoint hold DEVICE BYTES`, started as a worker
// (common/process.hpp): its standard input and output are a Unix socket to this process, and it is
// killed if this process dies first (PR_SET_PDEATHSIG), so a parent that fails leaves nothing.
class ThisProgramAgain {
public:
    ThisProgramAgain(const std::string& device, const std::string& bytes)
        : child_(tutorial::start_worker({"/proc/self/exe", "hold", device, bytes})) {}
    ~ThisProgramAgain() {  // it ends on its own once its input closes; after 10 s it is killed
        close(child_.socket);
        int status = 0;
        for (int waited_ms = 0; waitpid(child_.pid, &status, WNOHANG) == 0; waited_ms += 10) {
            if (waited_ms >= 10000) {
                kill(child_.pid, SIGKILL);
                waitpid(child_.pid, &status, 0);
                break;
            }
            usleep(10000);
        }
    }
    int pid() const { return child_.pid; }
    bool send(const std::string& text) {
        return tutorial::send_all(child_.socket, text.data(), text.size());
    }
    bool read_line(std::string& line, double seconds) {
        return tutorial::read_line(child_.socket, &line, seconds);
    }

private:
    tutorial::Worker child_;
};

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == "hold")  // the child
        return hold_pattern(std::atoi(argv[2]), std::strtoull(argv[3], nullptr, 10));
    const std::size_t bytes = std::size_t{256} << 20;
    CUDA_CHECK(cudaSetDevice(0));
    ThisProgramAgain child("0", std::to_string(bytes));
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found f = walkthrough(child);
    times.print();
    if (!f.child_ready) {
        std::fprintf(stderr, "the child never said where its pattern is\n");
        return 1;
    }
    if (f.locked != CUDA_SUCCESS || f.checkpointed != CUDA_SUCCESS) {
        const bool at_lock = f.locked != CUDA_SUCCESS;
        std::printf("not checkpointed here: %s returned %s\n",
                    at_lock ? "cuCheckpointProcessLock" : "cuCheckpointProcessCheckpoint",
                    tutorial::driver_error_name(at_lock ? f.locked : f.checkpointed));
        return 0;
    }
    std::printf("the child's state: %d, then %d %d %d %d (0 running, 1 locked, 2 checkpointed)\n",
                f.states[0], f.states[1], f.states[2], f.states[3], f.states[4]);
    std::printf("free device memory: %zu MiB locked, %zu MiB checkpointed, %zu MiB restored\n",
                f.free_locked >> 20, f.free_checkpointed >> 20, f.free_restored >> 20);
    std::printf("the child's pointer %p (before: %p) is %s: %zu values wrong\n",
                f.address_after, f.address,
                f.still_device ? "device memory still" : "no longer device memory", f.wrong);
    // The card's number: the free device memory gained while the child was checkpointed, and
    // lost again at the restore, against the child's buffer (its context's memory goes too).
    const auto ratio = [&](std::size_t more, std::size_t less) {
        return (static_cast<double>(more) - static_cast<double>(less)) / static_cast<double>(bytes);
    };
    std::printf(
        "%.2fx: while the child holding %zu MiB was checkpointed, free device memory rose "
        "by %.2f times its buffer and fell back by %.2f times at the restore; the child "
        "then read %zu of %zu values wrong %s\n",
        ratio(f.free_checkpointed, f.free_locked), bytes >> 20,
        ratio(f.free_checkpointed, f.free_locked), ratio(f.free_checkpointed, f.free_restored),
        f.wrong, bytes / sizeof(std::uint32_t),
        f.still_device ? "at the same address" : "(not read: no longer device memory)");
    return f.child_read && f.still_device && f.wrong == 0 ? 0 : 1;
}
#endif
