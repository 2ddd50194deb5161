// What the checks of chapter 07 share: how a worker a lesson started ended, the sum a worker's
// slice must have, whether legacy IPC works here, and how many worker processes fit on the device.
#pragma once

#include "common/harness/child.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

// How a worker that a lesson started (fork + exec) ended, from waitpid's status, in the harness's
// words: describe() says "exited with code 0", "died with SIGSEGV"; succeeded() is exit code 0.
tutorial::ChildResult child_result(int status);

// The sum of pattern(i, seed) for i in [offset, offset + count), from the formula.
std::uint64_t slice_sum(std::size_t offset, std::size_t count, std::uint32_t seed);

// Why legacy IPC (cudaIpcGetMemHandle, interprocess events) cannot work on `device`, or "": the
// cudaIpcGetMemHandle entry names ipcEventSupported as the test for IPC.
std::string why_no_legacy_ipc(int device);

// How many worker processes fit in the memory that is free now. Each worker holds a CUDA context
// of its own (524 MiB on an H100 with driver 580, counted here as 768 MiB) and `device_each` bytes
// of device memory and `host_each` bytes of host memory; the master holds `device_fixed` and
// `host_fixed` bytes besides, which it has not allocated yet when it asks.
struct WorkerMemory {
    std::size_t device_each = 0;
    std::size_t host_each = 0;
    std::size_t device_fixed = 0;
    std::size_t host_fixed = 0;
};
// `wanted`, or as many as fit where that is fewer (0 when none does).
int workers_fitting(int wanted, const WorkerMemory& need);
// What a section says when only `fitting` of the `wanted` workers fit: one line naming what they
// need and what is free ("" when all fit).
std::string workers_note(int wanted, int fitting, const WorkerMemory& need);
