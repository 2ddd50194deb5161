// The process plumbing of a master/worker batch, which `master_workers` and `robustness` share:
// start one worker process per slice (role `slice_worker`, defined in master_workers.cu), hand
// each its task over its stdin, wait for all with one deadline, and check what each did.
#pragma once

#include "common/harness/child.hpp"
#include "ipc_common.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct WorkerOutcome {
    std::size_t offset;
    std::size_t count;
    tutorial::ChildResult child;
    bool checksum_ok;    // the worker reported the sum the master expects for its slice
    bool results_ok;     // the worker's slice of the result buffer is right
    std::string mapped;  // the addresses the worker reported
};

// `task` carries the two buffers' IPC handles; each worker gets it with its own slice of `count`
// elements filled in. The input holds pattern(i, seed); every worker must answer the sum of its
// slice and write 2 * x + 1 into `result`. Worker `crash_worker` (or none, if -1) is told to crash
// in the middle of its task.
std::vector<WorkerOutcome> run_slice_workers(int device, SliceTask task, std::size_t count,
                                             int workers, int crash_worker, std::uint32_t seed,
                                             const std::uint32_t* result);
