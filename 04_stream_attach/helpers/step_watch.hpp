// What this chapter's checks see at a lesson's named steps (common/step.hpp, the stream each step
// names): the states that prove an order, read at the moments the walkthrough reaches, without
// changing what it does or in which order.
//
//   StepWatch watch;                      // watches every step from here on
//   const Found found = walkthrough();
//   watch.seen(cpu_writes_y).stream_at_begin   // cudaErrorNotReady: the kernel still ran
//
// As a step begins: cudaStreamQuery of its stream, and an event recorded there (it completes when
// the work queued before the step has). As it ends: whether that event had completed, whether the
// event recorded at the end of the step before it had (the work of that step), and the host time
// the step took. `hold(step, ms)`: that step (the lesson's constant) begins by queuing a busy
// kernel of `ms` on its stream, so that the work it queues is surely still running when the host
// goes on (the order the reference promises is then seen, not a race that the host happened to
// win).
// `print` (in a child process): a line per step, flushed at once, so that the parent can tell
// from the child's output how far it got before it ended:
//   step "the CPU writes y while stream1 runs": its stream -> cudaErrorNotReady
#pragma once

#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/step.hpp"
#include "common/timing.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

class StepWatch : public tutorial::StepWatcher {
public:
    struct Seen {
        cudaError_t stream_at_begin = cudaErrorUnknown;  // cudaStreamQuery as the step began
        cudaError_t before_at_end = cudaErrorUnknown;    // the work queued before it, as it ended
        cudaError_t previous_at_end = cudaErrorUnknown;  // the step before it, as this one ended
        double host_ms = 0.0;
        bool ran = false;
    };

    explicit StepWatch(bool print = false) : print_(print) { tutorial::watch_steps(this); }
    ~StepWatch() override {
        tutorial::watch_steps(nullptr);
        for (cudaEvent_t event : events_) (void)cudaEventDestroy(event);
    }
    StepWatch(const StepWatch&) = delete;
    StepWatch& operator=(const StepWatch&) = delete;

    void hold(const tutorial::Step& step, double ms) { holds_[step.name] = ms; }

    void begin(const char* name, cudaStream_t stream) override {
        open_ = name;
        stream_ = stream;
        const auto held = holds_.find(open_);
        if (held != holds_.end()) tutorial::launch_busy(stream, held->second);
        Seen& seen = seen_[open_];
        seen = Seen{};
        seen.ran = true;
        seen.stream_at_begin = cudaStreamQuery(stream);
        before_ = record(stream);
        timer_.restart();
        if (print_) {
            std::printf("step \"%s\": its stream -> %s\n", name,
                        cudaGetErrorName(seen.stream_at_begin));
            std::fflush(stdout);
        }
    }

    void end() override {
        Seen& seen = seen_[open_];
        seen.host_ms = timer_.elapsed_ms();
        seen.before_at_end = cudaEventQuery(before_);
        if (previous_ != nullptr) seen.previous_at_end = cudaEventQuery(previous_);
        previous_ = record(stream_);
        if (print_) {
            std::printf("end of \"%s\": the work before it -> %s\n", open_.c_str(),
                        cudaGetErrorName(seen.before_at_end));
            std::printf("end of \"%s\": the step before it -> %s\n", open_.c_str(),
                        cudaGetErrorName(seen.previous_at_end));
            std::fflush(stdout);
        }
    }

    // What was seen at that step (the last time it ran); `ran` is false if never.
    Seen seen(const tutorial::Step& step) const {
        const auto found = seen_.find(step.name);
        return found == seen_.end() ? Seen{} : found->second;
    }

private:
    cudaEvent_t record(cudaStream_t stream) {
        cudaEvent_t event = nullptr;
        CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
        CUDA_CHECK(cudaEventRecord(event, stream));
        events_.push_back(event);
        return event;
    }

    bool print_;
    std::map<std::string, double> holds_;
    std::map<std::string, Seen> seen_;
    std::vector<cudaEvent_t> events_;
    std::string open_;
    cudaStream_t stream_ = nullptr;
    cudaEvent_t before_ = nullptr;
    cudaEvent_t previous_ = nullptr;
    tutorial::HostTimer timer_;
};
