// Free device memory at the steps of a walkthrough: cudaMemGetInfo at each step's start and at
// its end, for the checks of the sections whose lesson is what memory a step takes or gives back
// (basics, growable, sleep_wake). Like the course's other watchers it changes nothing the
// walkthrough does (common/step.hpp), and it uninstalls itself when it goes out of scope.
//
//   vmm_checks::StepMemory memory;
//   walkthrough(ctx.device, bytes);
//   const std::size_t while_mapped = memory.at_start(torn_down).back();   // the lesson's Step
#pragma once

#include "common/check.hpp"
#include "common/step.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace vmm_checks {

class StepMemory : public tutorial::StepWatcher {
public:
    StepMemory() { tutorial::watch_steps(this); }
    ~StepMemory() override { tutorial::watch_steps(nullptr); }
    StepMemory(const StepMemory&) = delete;
    StepMemory& operator=(const StepMemory&) = delete;

    void begin(const char* name, cudaStream_t) override {
        open_ = name;
        at_start_[open_].push_back(free_now());
    }
    void end() override {
        if (open_.empty()) return;
        at_end_[open_].push_back(free_now());
        open_.clear();
    }

    // Free device memory at the start (at the end) of each run of the step, in the order run.
    const std::vector<std::size_t>& at_start(const tutorial::Step& step) const {
        return of(at_start_, step.name);
    }
    const std::vector<std::size_t>& at_end(const tutorial::Step& step) const {
        return of(at_end_, step.name);
    }

    static std::size_t free_now() {
        std::size_t free_bytes = 0;
        std::size_t total = 0;
        CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
        return free_bytes;
    }

private:
    using Record = std::map<std::string, std::vector<std::size_t>>;
    static const std::vector<std::size_t>& of(const Record& record, const std::string& name) {
        const auto found = record.find(name);
        if (found == record.end()) {
            std::fprintf(stderr, "checks: the walkthrough ran no step named \"%s\"\n",
                         name.c_str());
            std::exit(1);
        }
        return found->second;
    }

    std::string open_;
    Record at_start_;
    Record at_end_;
};

// How much of `bytes` the free memory fell (rose) by from `before` to `after`, as a ratio; 0 when
// it moved the other way.
inline double fell_by(std::size_t before, std::size_t after, std::size_t bytes) {
    return before > after ? static_cast<double>(before - after) / static_cast<double>(bytes) : 0.0;
}

}  // namespace vmm_checks
