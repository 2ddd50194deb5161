// The master/worker batch of master_workers.cu, which `robustness` runs too.
#pragma once

#include "common/child.hpp"

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

struct BatchOutcome {
    std::uintptr_t input;  // the master's own addresses of the two buffers
    std::uintptr_t result;
    std::vector<WorkerOutcome> workers;
};

// The master fills `count` values on the device, starts `workers` worker processes, sends each
// its slice, waits for all (with a deadline) and checks every slice. Worker `crash_worker` (or
// none, if -1) is told to crash in the middle of its task.
BatchOutcome run_batch(int device, std::size_t count, int workers, int crash_worker);
