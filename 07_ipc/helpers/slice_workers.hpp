// The process plumbing of a master/worker batch, which `master_workers` and `robustness` share:
// start one worker process per task line (role `slice_worker`, in checks/master_workers.cu), hand
// each its line on its stdin, wait for all with one deadline, and check what each did.
#pragma once

#include "common/harness/child.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// A worker's slice of the batch: `count` elements from element `offset`.
struct Slice {
    std::size_t offset;
    std::size_t count;
};

struct WorkerOutcome {
    std::size_t offset;
    std::size_t count;
    tutorial::ChildResult child;
    bool checksum_ok;    // the worker reported the sum the master expects for its slice
    bool results_ok;     // the worker's slice of the result buffer is right
    std::string mapped;  // the addresses the worker reported
};

// One worker per task line, whose slice is slices[w]. The input holds pattern(i, seed); every
// worker must answer the sum of its slice and write 2 * x + 1 into `result`. Worker
// `crash_worker` (or none, if -1) is told to crash in the middle of its task.
std::vector<WorkerOutcome> run_slice_workers(int device, const std::vector<std::string>& task_lines,
                                             const std::vector<Slice>& slices, int crash_worker,
                                             std::uint32_t seed, const std::uint32_t* result);
