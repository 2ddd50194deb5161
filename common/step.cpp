// StepTimes (common/step.hpp): each step of a walkthrough timed by events and by the host clock.
#include "common/step.hpp"

#include "common/check.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace tutorial {
namespace {

double now_ms() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

[[noreturn]] void no_such_step(const std::string& name) {
    std::fprintf(stderr, "the walkthrough ran no step named \"%s\"\n", name.c_str());
    std::exit(1);
}

}  // namespace

StepTimes::StepTimes() {
    watch_steps(this);
}

StepTimes::~StepTimes() {
    watch_steps(nullptr);
    for (const Pending& p : pending_) {
        (void)cudaEventDestroy(p.start);
        (void)cudaEventDestroy(p.stop);
    }
}

void StepTimes::begin(const char* name, cudaStream_t stream) {
    open_ = Open{name, nullptr, stream, 0.0};
    CUDA_CHECK(cudaEventCreate(&open_.start));
    CUDA_CHECK(cudaEventRecord(open_.start, stream));
    open_.host_start = now_ms();
    running_ = true;
}

void StepTimes::end() {
    if (!running_) return;
    host_ms_[open_.name].push_back(now_ms() - open_.host_start);
    cudaEvent_t stop = nullptr;
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(stop, open_.stream));
    pending_.push_back(Pending{open_.name, open_.start, stop});
    if (std::find(order_.begin(), order_.end(), open_.name) == order_.end()) {
        order_.push_back(open_.name);
    }
    running_ = false;
}

void StepTimes::resolve() {
    for (const Pending& p : pending_) {
        CUDA_CHECK(cudaEventSynchronize(p.stop));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, p.start, p.stop));
        gpu_ms_[p.name].push_back(ms);
        CUDA_CHECK(cudaEventDestroy(p.start));
        CUDA_CHECK(cudaEventDestroy(p.stop));
    }
    pending_.clear();
}

std::vector<double> StepTimes::ms(const Step& step) {
    const std::string name = step.name;
    resolve();
    const auto found = gpu_ms_.find(name);
    if (found == gpu_ms_.end()) no_such_step(name);
    return found->second;
}

std::vector<double> StepTimes::host_ms(const Step& step) {
    const std::string name = step.name;
    const auto found = host_ms_.find(name);
    if (found == host_ms_.end()) no_such_step(name);
    return found->second;
}

double StepTimes::median_ms(const Step& step) {
    return median(ms(step));
}

double StepTimes::median_host_ms(const Step& step) {
    return median(host_ms(step));
}

void StepTimes::clear() {
    resolve();
    gpu_ms_.clear();
    host_ms_.clear();
    order_.clear();
}

void StepTimes::print() {
    resolve();
    if (order_.empty()) return;  // no step ran
    std::size_t width = 4;
    for (const std::string& name : order_) width = std::max(width, name.size());
    std::printf("%-*s  %10s  %10s  %5s\n", static_cast<int>(width), "step", "GPU ms", "host ms",
                "runs");
    for (const std::string& name : order_) {
        std::printf("%-*s  %10.3f  %10.3f  %5zu\n", static_cast<int>(width), name.c_str(),
                    median(gpu_ms_[name]), median(host_ms_[name]), host_ms_[name].size());
    }
}

}  // namespace tutorial
