// Measuring time the way the course reports it: CUDA events around device work, a steady host
// clock around host work, warm-up first, then the median of several runs.
#pragma once

#include "common/check.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace tutorial {

// Two CUDA events recorded on a stream. The GPU timestamps them when the stream reaches them, so
// the difference is the device time between them, independent of when the CPU got there.
class EventTimer {
public:
    explicit EventTimer(cudaStream_t stream = nullptr) : stream_(stream) {
        CUDA_CHECK(cudaEventCreate(&start_));
        CUDA_CHECK(cudaEventCreate(&stop_));
    }
    ~EventTimer() {
        CUDA_CHECK(cudaEventDestroy(start_));
        CUDA_CHECK(cudaEventDestroy(stop_));
    }
    EventTimer(const EventTimer&) = delete;
    EventTimer& operator=(const EventTimer&) = delete;

    void start() { CUDA_CHECK(cudaEventRecord(start_, stream_)); }
    void stop() { CUDA_CHECK(cudaEventRecord(stop_, stream_)); }

    // Waits for the stop event, then returns milliseconds between start() and stop().
    double elapsed_ms() const {
        CUDA_CHECK(cudaEventSynchronize(stop_));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        return ms;
    }

private:
    cudaStream_t stream_;
    cudaEvent_t start_ = nullptr;
    cudaEvent_t stop_ = nullptr;
};

// Wall-clock time on the host, for work the CPU does (or waits for).
class HostTimer {
public:
    HostTimer() : start_(std::chrono::steady_clock::now()) {}
    void restart() { start_ = std::chrono::steady_clock::now(); }
    double elapsed_ms() const {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
            .count();
    }

private:
    std::chrono::steady_clock::time_point start_;
};

inline double median(std::vector<double> values) {
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    const std::size_t middle = values.size() / 2;
    return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2.0;
}

// Calls `run_once` (which returns the milliseconds one run took) `warmup` times, ignoring the
// results, then `runs` times, and returns the median: robust against the odd slow run.
template <typename RunOnce>
double median_ms(int warmup, int runs, RunOnce run_once) {
    for (int i = 0; i < warmup; ++i) run_once();
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) times.push_back(run_once());
    return median(times);
}

// The device time of the work `enqueue` queues on the legacy default stream, between events:
// `warmup` untimed rounds, then the median of `runs` rounds. A round calls `enqueue` `repeats`
// times back to back and counts a `repeats`-th of its time, so that work of a few microseconds
// (a copy of a few KiB) lasts long enough to be timed.
//
//   const double ms = median_event_ms(1, 5, [&] { CUDA_CHECK(cudaMemcpy(d, h, n, kind)); });
template <typename Enqueue>
double median_event_ms(int warmup, int runs, Enqueue enqueue, int repeats = 1) {
    EventTimer timer;
    return median_ms(warmup, runs, [&] {
        timer.start();
        for (int r = 0; r < repeats; ++r) enqueue();
        timer.stop();
        return timer.elapsed_ms() / repeats;
    });
}

// The median of several measurements with their spread.
struct Spread {
    double median = 0.0;
    double low = 0.0;   // the smallest
    double high = 0.0;  // the largest
};

inline Spread spread_of(const std::vector<double>& values) {
    Spread s;
    if (values.empty()) return s;
    s.median = median(values);
    s.low = *std::min_element(values.begin(), values.end());
    s.high = *std::max_element(values.begin(), values.end());
    return s;
}

// Several candidates measured in turns, as a benchmark compares them: each round times every
// candidate once, in order, so that a slow spell of a shared machine falls on all of them alike
// rather than on whichever ran then. `time_once(i)` times candidate i once and returns its
// milliseconds; `warmup` untimed rounds come first. Returns each candidate's median and spread.
//
//   const auto ms = interleaved_ms(2, 1, 7, [&](std::size_t i) { return time_copy(from[i]); });
template <typename TimeOnce>
std::vector<Spread> interleaved_ms(std::size_t candidates, int warmup, int rounds,
                                   TimeOnce time_once) {
    for (int round = 0; round < warmup; ++round) {
        for (std::size_t i = 0; i < candidates; ++i) time_once(i);
    }
    std::vector<std::vector<double>> times(candidates);
    for (int round = 0; round < rounds; ++round) {
        for (std::size_t i = 0; i < candidates; ++i) times[i].push_back(time_once(i));
    }
    std::vector<Spread> result;
    for (const auto& values : times) result.push_back(spread_of(values));
    return result;
}

// Bandwidth in GB/s, where 1 GB = 1e9 bytes (the unit of PCIe and HBM data sheets).
inline double gb_per_s(std::size_t bytes, double ms) {
    return ms > 0.0 ? static_cast<double>(bytes) / (ms * 1e-3) / 1e9 : 0.0;
}

}  // namespace tutorial
