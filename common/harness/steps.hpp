// Watching a walkthrough: the checks' side of common/step.hpp, where StepTimes lives.
//
// A lesson declares the steps of its walkthrough as tutorial::Step constants and opens each with
// tutorial::During; the checks run the same walkthrough with a watcher installed and read what
// each step took or moved, by the lesson's constant, without re-sequencing the lesson:
//
//   tutorial::StepTimes times;                 // watches every step from here on
//   for (int r = 0; r < runs; ++r) walkthrough(bytes, ctx.device);   // rounds: interleaved
//   const double faults_ms = times.median_ms(faults_in);
//
//   tutorial::UmCounters counters;
//   tutorial::StepTraffic traffic(counters);   // what the driver moved in each step
//   walkthrough(counted_bytes, ctx.device);
//   const tutorial::UmTraffic& t = traffic.of(prefetched);
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
    const UmTraffic& of(const Step& step) const;
    // The steps in the order they ran, for a table.
    const std::vector<std::string>& order() const { return order_; }

private:
    UmCounters& counters_;
    std::string open_;
    std::map<std::string, UmTraffic> traffic_;
    std::vector<std::string> order_;
};

}  // namespace tutorial
