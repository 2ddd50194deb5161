// Text for messages: printf into a std::string, and sizes in binary units. Used by the error
// checks and device queries a learner reads, and by the course's reports.
#pragma once

#include <cstddef>
#include <string>

namespace tutorial {

// printf into a std::string, for table cells: format("%.1f", gbps).
std::string format(const char* pattern, ...) __attribute__((format(printf, 1, 2)));

// "256 MiB", "4 KiB", "1.5 GiB", "100 B".
std::string format_bytes(std::size_t bytes);

}  // namespace tutorial
