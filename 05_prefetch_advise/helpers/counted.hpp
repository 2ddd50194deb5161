// Counting what migrates: this chapter's tables of the driver's Unified Memory counters
// (common/harness/um_counters.hpp), for the steps a walkthrough names (StepTraffic,
// common/harness/steps.hpp). Checking code, like the claims: no lesson calls these.
#pragma once

#include "common/harness/steps.hpp"
#include "common/harness/um_counters.hpp"

#include <cstddef>
#include <cstdint>
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

// What the driver moved in each step `traffic` watched, in the order the steps ran: a blank
// line, "What the driver moved in each step, <what> (its Unified Memory counters):", the
// counters' positive control (counters.control_line(): until it has seen bytes that must move,
// "nothing moved" means nothing), and the table.
void print_traffic(const tutorial::UmCounters& counters, const tutorial::StepTraffic& traffic,
                   const std::string& what);

using tutorial::why_not_counted;  // common/harness/um_counters.hpp
