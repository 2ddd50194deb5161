#include "common/harness/steps.hpp"

#include "common/check.hpp"

#include <algorithm>

namespace tutorial {

StepTraffic::StepTraffic(UmCounters& counters) : counters_(counters) {
    watch_steps(this);
}

StepTraffic::~StepTraffic() {
    watch_steps(nullptr);
}

void StepTraffic::begin(const char* name, cudaStream_t) {
    CUDA_CHECK(cudaDeviceSynchronize());  // what came before is not this step's
    open_ = name;
    counters_.start();
}

void StepTraffic::end() {
    if (open_.empty()) return;
    traffic_[open_] = counters_.stop();
    if (std::find(order_.begin(), order_.end(), open_) == order_.end()) order_.push_back(open_);
    open_.clear();
}

const UmTraffic& StepTraffic::of(const Step& step) const {
    static const UmTraffic none{};
    const auto found = traffic_.find(step.name);
    return found == traffic_.end() ? none : found->second;
}

}  // namespace tutorial
