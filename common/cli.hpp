// The command line every chapter shares:
//
//   NN_name [SECTION...] [--device N] [--size SIZE] [--iters N] [--workers N] [--quick] [--list]
//           [--help]
//
// Parsing touches no CUDA API, so --help, --list and bad input behave the same with or without a
// GPU. Each parse function returns an empty string on success, or the one-line problem otherwise.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tutorial {

struct Options {
    std::vector<std::string> sections;  // as named on the command line; empty means "all"
    int device = 0;
    std::size_t size = 0;  // bytes; 0 means "each section's own default"
    int iters = 0;         // timed repetitions; 0 means "each section's own default"
    int workers = 0;       // worker processes; 0 means "each section's own default"
    bool quick = false;    // small sizes and few repetitions: what the tests use
    bool help = false;
    bool list = false;
};

// "4096", "4KiB", "256MiB", "2GiB", "1TiB" (binary suffixes, case-insensitive). Rejects zero,
// negative numbers, fractions, decimal suffixes such as "MB" and anything that overflows.
std::string parse_size(const std::string& text, std::size_t& bytes);

// A whole number in [min, max].
std::string parse_int(const std::string& text, long min, long max, long& value);

std::string parse_options(int argc, const char* const argv[], Options& options);

// A section's own limits on --size, for Section::check_options: "" when no --size was given or
// it is a multiple of `multiple` and at most `most`; otherwise the one-line problem.
std::string check_size_limits(const Options& options, std::size_t multiple, std::size_t most);

// "256 MiB", "4 KiB", "1.5 GiB", "100 B".
std::string format_bytes(std::size_t bytes);

}  // namespace tutorial
