#include "common/harness/report.hpp"
#include "common/timing.hpp"
#include "tests.hpp"

#include <chrono>
#include <thread>

using tutorial::Context;
using tutorial::Result;

Result test_median(Context& ctx) {
    const bool odd = tutorial::median({5.0, 1.0, 3.0}) == 3.0;
    const bool even = tutorial::median({4.0, 1.0, 3.0, 2.0}) == 2.5;
    const bool outlier = tutorial::median({1.0, 1.0, 1000.0}) == 1.0;
    const bool empty = tutorial::median({}) == 0.0;

    // median_ms must discard the warm-up runs: they return 100, the measured runs 1, 2, 3.
    int calls = 0;
    const double measured = tutorial::median_ms(2, 3, [&] {
        ++calls;
        return calls <= 2 ? 100.0 : static_cast<double>(calls - 2);
    });
    const bool warmup = measured == 2.0 && calls == 5;

    tutorial::HostTimer timer;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const double slept = timer.elapsed_ms();
    const bool clock = slept >= 20.0 && slept < 2000.0;

    std::printf(
        "median odd/even/outlier/empty: %d %d %d %d; warm-up discarded: %d; "
        "a 20 ms sleep measured %.1f ms\n",
        odd, even, outlier, empty, warmup, slept);
    std::printf("gb_per_s(1e9 bytes, 1000 ms) = %.3f GB/s\n",
                tutorial::gb_per_s(1000000000, 1000.0));
    const bool bandwidth = tutorial::gb_per_s(1000000000, 1000.0) == 1.0 &&
                           tutorial::gb_per_s(256u << 20, 5.0) == (256.0 * 1048576) / 5e-3 / 1e9;
    return ctx.verdict(odd && even && outlier && empty && warmup && clock && bandwidth,
                       "median, median_ms warm-up, HostTimer and gb_per_s against known values");
}
