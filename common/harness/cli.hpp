// The command line every chapter shares:
//
//   NN_name [SECTION...] [--device N] [--size SIZE] [--iters N] [--workers N] [--quick]
//           [--csv DIR] [--pause] [--list] [--limits] [--help]
//
// Parsing touches no CUDA API, so --help, --list and bad input behave the same with or without a
// GPU. Each function returns an empty string on success, or the one-line problem otherwise.
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
    std::string csv_dir;   // where every table is also written as a CSV file; empty: nowhere
    bool pause = false;    // wait for Enter after each section (when stdin is a terminal)
    bool help = false;
    bool list = false;
    bool limits = false;  // --limits: each section's option limits, in plain numbers, for scripts
};

// "4096", "4KiB", "256MiB", "2GiB", "1TiB" (binary suffixes, case-insensitive). Rejects zero,
// negative numbers, fractions, decimal suffixes such as "MB" and anything that overflows.
// An argument as an error message may show it: in quotes, control characters written as \xNN,
// and cut after 40 characters, so that no argument can act on the terminal or flood it.
std::string quoted_argument(const std::string& text);
// A path as an error message shows it: the same, but whole (the part that is wrong is often the
// end of it).
std::string quoted_path(const std::string& path);
// "4 KiB", or "4.0 KiB (4097 bytes)" where the rounded form would hide the exact size.
std::string size_in_words(std::size_t bytes);

std::string parse_size(const std::string& text, std::size_t& bytes);

// A whole number in [min, max].
std::string parse_int(const std::string& text, long min, long max, long& value);

std::string parse_options(int argc, const char* const argv[], Options& options);

// The name in `names` closest to `typed` (fewest letters added, removed, changed or swapped), if
// it is close enough to be a slip of the keyboard ("bandwith" -> "bandwidth"), else "".
std::string closest_name(const std::string& typed, const std::vector<std::string>& names);

// --csv DIR: "" if DIR is a folder this process can make a file in, or does not exist yet and
// can be made (the folder above it exists; the first table written makes DIR), else the problem
// in words ("'x' is a file, not a folder", "cannot create the folder 'x/y': 'x' does not exist",
// "cannot write into 'x': Permission denied"). It tries: it makes a file or the folder, and
// removes it again, so that it leaves nothing behind.
std::string prepare_csv_dir(const std::string& dir);

// The path without "//", "/./" or a trailing "/" ("a//b/./c/" -> "a/b/c").
std::string tidy_path(const std::string& path);
// The path from the root, tidied: as given if it starts with '/', else after the current folder.
std::string absolute_path(const std::string& path);

constexpr std::size_t KiB = std::size_t{1} << 10;
constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr std::size_t GiB = std::size_t{1} << 30;

// Which of --size, --iters and --workers a section uses, and the values it can work with. Every
// section declares it in its chapter's main.cpp:
//
//   Section{"bandwidth", "copy GB/s ...", run_bandwidth, Takes{}.size(4 * KiB, 4 * GiB).iters()},
//
// run_chapter refuses, before any CUDA call, an option that none of the sections to be run uses
// and a value outside the limits of one that does; --help lists each section's options.
struct Takes {
    bool takes_size = false;
    std::size_t size_multiple = 1;
    std::size_t size_min = 0;
    std::size_t size_max = 0;
    int device_buffers = 0;  // buffers of --size the section holds at once in device memory
    int host_buffers = 0;    // ... and in host memory (pageable or pinned)
    bool takes_iters = false;
    int iters_min = 1;
    int iters_max = 100;
    bool takes_workers = false;
    int workers_min = 1;
    int workers_max = 0;

    // --size: a multiple of `multiple` bytes, at most `most`, and at least `least` where a
    // smaller size would make the section's check meaningless (0: one multiple).
    Takes& size(std::size_t multiple, std::size_t most, std::size_t least = 0);
    // How many buffers of --size the section holds at once, in device and in host memory: a
    // --size they do not fit in is refused (exit 2) once the free memory is known.
    Takes& holds(int on_device, int on_host);
    // --iters: from `least` to `most` repetitions (no legal value may make a run take hours).
    Takes& iters(int least = 1, int most = 100);
    // --workers: from `least` to `most` processes.
    Takes& workers(int least, int most);
};

// "--size (a multiple of 4 KiB, at most 4 GiB), --iters", or "" for a section that takes none.
std::string describe(const Takes& takes);

// The problem with the options' values for a section that takes them, or "".
std::string check_limits(const Options& options, const Takes& takes);

}  // namespace tutorial
