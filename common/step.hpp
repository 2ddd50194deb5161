// Steps: names for the parts of a walkthrough, so that whoever runs it can watch each part.
//
//   tutorial::step("a kernel reads, pages fault in");
//   sum_kernel<<<blocks, threads>>>(data, count, sum);
//   tutorial::step("cudaMemPrefetchAsync to the GPU");
//   CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, nullptr));
//   tutorial::step_end();
//
// A step lasts from its step() to the next step() or step_end(). In a lesson built on its own
// these calls do nothing at all. The course's checks run the same walkthrough and watch its
// steps: they time each one, or count what the driver moved during it, without changing what the
// walkthrough does or in which order (common/harness/steps.hpp). `stream` is the stream the
// step's GPU work goes to (the legacy default stream when left out): a timer records its events
// there, so that a step is timed where its work runs.
//
// One walkthrough at a time, on one host thread.
#pragma once

#include <cuda_runtime.h>

namespace tutorial {

// What watches a walkthrough's steps (the checks' timers and counters implement it).
class StepWatcher {
public:
    virtual ~StepWatcher() = default;
    virtual void begin(const char* name, cudaStream_t stream) = 0;
    virtual void end() = 0;
};

namespace step_state {
inline StepWatcher* watcher = nullptr;
inline bool open = false;
}  // namespace step_state

// The end of the step that is running, if any.
inline void step_end() {
    if (step_state::watcher != nullptr && step_state::open) step_state::watcher->end();
    step_state::open = false;
}

// The start of a step named `name` (and the end of the one before it).
inline void step(const char* name, cudaStream_t stream = nullptr) {
    if (step_state::watcher == nullptr) return;
    step_end();
    step_state::watcher->begin(name, stream);
    step_state::open = true;
}

// Who watches the steps from now on (nullptr: nobody). For the checks, not for lessons.
inline void watch_steps(StepWatcher* watcher) {
    step_end();
    step_state::watcher = watcher;
}

}  // namespace tutorial
