// Watching a walkthrough: the checks' side of common/step.hpp.
//
// A lesson names the parts of its walkthrough with tutorial::step("name"); the checks run the
// same walkthrough with a watcher installed and read what each named step took or moved, without
// re-sequencing the lesson:
//
//   tutorial::StepTimes times;                 // watches every step from here on
//   for (int r = 0; r < runs; ++r) walkthrough(bytes, ctx.device);   // rounds: interleaved
//   const double faults_ms = times.median_ms("a kernel reads, pages fault in");
//
//   tutorial::UmCounters counters;
//   tutorial::StepTraffic traffic(counters);   // what the driver moved in each step
//   walkthrough(counted_bytes, ctx.device);
//   const tutorial::UmTraffic& t = traffic.of("cudaMemPrefetchAsync to the GPU");
//
// A watcher uninstalls itself when it goes out of scope. Only one watches at a time.
#pragma once

#include "common/harness/um_counters.hpp"
#include "common/step.hpp"

#include <cuda_runtime.h>

#include <map>
#include <string>
#include <vector>

namespace tutorial {

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
};

// What the driver moved in each step (the Unified Memory counters): each step waits for the
// device at its start and its end, so that its records are its own. The walkthrough's order is
// kept; only its overlap across step boundaries is lost, which counting needs.
class StepTraffic : public StepWatcher {
public:
    explicit StepTraffic(UmCounters& counters);
    ~StepTraffic() override;
    StepTraffic(const StepTraffic&) = delete;
    StepTraffic& operator=(const StepTraffic&) = delete;

    void begin(const char* name, cudaStream_t stream) override;
    void end() override;

    // What moved in the step of that name (the last time it ran); not counted if never run.
    const UmTraffic& of(const std::string& name) const;
    // The steps in the order they ran, for a table.
    const std::vector<std::string>& order() const { return order_; }

private:
    UmCounters& counters_;
    std::string open_;
    std::map<std::string, UmTraffic> traffic_;
    std::vector<std::string> order_;
};

}  // namespace tutorial
