// Counting what migrates: this chapter's tables of the driver's Unified Memory counters
// (common/harness/um_counters.hpp). Checking code, like the claims: no lesson calls these.
#pragma once

#include "common/harness/report.hpp"
#include "common/harness/um_counters.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>

// A step that moves much more than 64 MiB can lose records silently (um_counters.hpp), so a
// section that times bigger buffers counts its steps on a buffer of at most this size.
constexpr std::size_t counted_max_bytes = std::size_t{64} << 20;
inline std::size_t counted_bytes(std::size_t bytes) {
    return bytes < counted_max_bytes ? bytes : counted_max_bytes;
}

// Bytes as a percentage of a buffer (100 * bytes / buffer), and as MiB.
double percent_of(std::uint64_t bytes, std::size_t buffer);
double mib_of(std::uint64_t bytes);

// Steps run with the counters on, one table row each: what moved each way, the page faults.
class CountedSteps {
public:
    explicit CountedSteps(tutorial::UmCounters& counters);
    // Runs `run` (then waits for the device) and adds its row, named in the lesson's words.
    tutorial::UmTraffic step(const std::string& name, const std::function<void()>& run);
    // Prints a blank line, `title` (a line ending in ':') and the table.
    void print(const std::string& title) const;

private:
    tutorial::UmCounters& counters_;
    tutorial::Table table_;
};

using tutorial::why_not_counted;  // common/harness/um_counters.hpp
