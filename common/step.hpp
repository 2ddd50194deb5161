// Steps: the phases of a walkthrough's story, so that whoever runs it can watch each phase.
//
// A lesson declares its steps once, as constants, and opens each for as long as a scope lasts:
//
//   constexpr tutorial::Step faults_in{"a kernel reads, pages fault in"};
//   constexpr tutorial::Step prefetched{"prefetched first, then read"};
//   ...
//   {
//       const tutorial::During during(faults_in);
//       sum_kernel<<<blocks, threads>>>(data, count, sum);
//   }
//
// A step is a phase of the story (what happens), not the name of the call under it. The checks
// read a step's time or traffic by the same constant (times.median_ms(faults_in)), so a renamed
// or removed step is a compile error, not a failure at run time. Nothing watches the steps until
// a watcher is made: then each step is measured without changing what the walkthrough does or in
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
//       std::printf("prefetching first: %.1fx faster\n",
//                   times.median_ms(faults_in) / times.median_ms(prefetched));
//   }
//
// One walkthrough at a time, on one host thread; steps do not nest.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <string>
#include <vector>

namespace tutorial {

// One phase of a walkthrough, declared once (constexpr) in the lesson.
struct Step {
    const char* name;
};

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

inline void end() {
    if (watcher != nullptr && open) watcher->end();
    open = false;
}

inline void begin(const Step& step, cudaStream_t stream) {
    if (watcher == nullptr) return;
    end();
    watcher->begin(step.name, stream);
    open = true;
}
}  // namespace step_state

// The step `step` runs from here to the end of the enclosing scope.
class During {
public:
    explicit During(const Step& step, cudaStream_t stream = nullptr) {
        step_state::begin(step, stream);
    }
    ~During() { step_state::end(); }
    During(const During&) = delete;
    During& operator=(const During&) = delete;
};

// Who watches the steps from now on (nullptr: nobody). Watchers install themselves.
inline void watch_steps(StepWatcher* watcher) {
    step_state::end();
    step_state::watcher = watcher;
}

// Times each step two ways: GPU time between two events recorded on the step's stream (for
// steps whose work runs on the GPU), and host time from the step's start to its end (for steps
// the CPU does, or that wait). Neither waits for anything: the walkthrough runs as it would
// alone.
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
    std::vector<double> ms(const Step& step);
    std::vector<double> host_ms(const Step& step);
    double median_ms(const Step& step);
    double median_host_ms(const Step& step);
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
