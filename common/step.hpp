// Steps: names for the parts of a walkthrough, so that whoever runs it can watch each part.
//
//   tutorial::step("a kernel reads, pages fault in");
//   sum_kernel<<<blocks, threads>>>(data, count, sum);
//   tutorial::step("cudaMemPrefetchAsync to the GPU");
//   CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, nullptr));
//   tutorial::step_end();
//
// A step lasts from its step() to the next step() or step_end(). Nothing watches them until a
// watcher is made: then each step is measured without changing what the walkthrough does or in
// which order. StepTimes (below) is the learner's instrument: a lesson's own main() makes one,
// runs the walkthrough and prints what each step took (times.print()); the course's checks use
// the same timer over rounds, and count what the driver moved in each step with StepTraffic
// (common/harness/steps.hpp). `stream` is the stream the step's GPU work goes to (the legacy
// default stream when left out): the timer records its events there, so that a step is timed
// where its work runs.
//
//   int main() {
//       tutorial::StepTimes times;       // times every step from here on
//       walkthrough(bytes, 0);
//       times.print();                   // each step: GPU ms (events) and host ms
//   }
//
// One walkthrough at a time, on one host thread.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <string>
#include <vector>

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

// Who watches the steps from now on (nullptr: nobody). Watchers install themselves.
inline void watch_steps(StepWatcher* watcher) {
    step_end();
    step_state::watcher = watcher;
}

// Times each step two ways: GPU time between two events recorded on the step's stream (for
// steps whose work runs on the GPU), and host time from step() to the step's end (for steps the
// CPU does, or that wait). Neither waits for anything: the walkthrough runs as it would alone.
class StepTimes : public StepWatcher {
public:
    StepTimes();
    ~StepTimes() override;
    StepTimes(const StepTimes&) = delete;
    StepTimes& operator=(const StepTimes&) = delete;

    void begin(const char* name, cudaStream_t stream) override;
    void end() override;

    // Every time measured for a step so far, in milliseconds (waits for its events first), and
    // their median; a step never run is an error (exit 1, naming the step).
    std::vector<double> ms(const std::string& name);
    std::vector<double> host_ms(const std::string& name);
    double median_ms(const std::string& name);
    double median_host_ms(const std::string& name);
    // Forgets every time so far (fresh rounds for a claim measured again).
    void clear();
    // Prints every step in the order it first ran: its median GPU and host time, and how many
    // times it ran.
    void print();

private:
    struct Open {
        std::string name;
        cudaEvent_t start = nullptr;
        cudaStream_t stream = nullptr;
        double host_start = 0.0;
    };
    struct Pending {
        std::string name;
        cudaEvent_t start = nullptr;
        cudaEvent_t stop = nullptr;
    };
    void resolve();

    Open open_;
    bool running_ = false;
    std::vector<Pending> pending_;
    std::map<std::string, std::vector<double>> gpu_ms_;
    std::map<std::string, std::vector<double>> host_ms_;
    std::vector<std::string> order_;
};

}  // namespace tutorial
