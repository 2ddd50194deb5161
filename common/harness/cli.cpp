#include "common/harness/cli.hpp"

#include "common/harness/report.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <limits>

namespace tutorial {

namespace {

std::string lowercase(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// Splits "123GiB" into digits and suffix; false if it does not start with a digit.
bool split_number(const std::string& text, std::string& digits, std::string& suffix) {
    std::size_t end = 0;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    digits = text.substr(0, end);
    suffix = text.substr(end);
    return !digits.empty();
}

// Accumulates decimal digits into `value`; false on overflow.
bool to_unsigned(const std::string& digits, unsigned long long& value) {
    value = 0;
    for (const char c : digits) {
        const unsigned d = static_cast<unsigned>(c - '0');
        if (value > (std::numeric_limits<unsigned long long>::max() - d) / 10) return false;
        value = value * 10 + d;
    }
    return true;
}

}  // namespace

namespace {

// The argument in quotes, control characters written as \xNN, at most `longest` characters.
std::string quoted(const std::string& text, std::size_t longest) {
    std::string shown;
    for (std::size_t i = 0; i < text.size() && i < longest; ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        // Control characters would act on the terminal (an escape sequence, a newline): show
        // their code instead.
        shown += byte < 0x20 || byte == 0x7f ? format("\\x%02x", byte) : std::string(1, text[i]);
    }
    if (text.size() > longest) {
        return "'" + shown + "...' (" + std::to_string(text.size()) + " characters)";
    }
    return "'" + shown + "'";
}

}  // namespace

std::string quoted_argument(const std::string& text) { return quoted(text, 40); }

// A path is shown whole: the wrong part of it is often at its end. 4096 is PATH_MAX.
std::string quoted_path(const std::string& path) { return quoted(path, 4096); }

std::string size_in_words(std::size_t bytes) {
    const std::string rounded = format_bytes(bytes);
    const bool exact = rounded.find('.') == std::string::npos;
    return exact ? rounded : rounded + " (" + std::to_string(bytes) + " bytes)";
}

std::string parse_size(const std::string& text, std::size_t& bytes) {
    const std::string quoted = quoted_argument(text);
    const std::string expected =
        ": expected a whole number with an optional binary suffix B, KiB, MiB, GiB or TiB "
        "(for example 256MiB)";
    std::string digits;
    std::string suffix;
    if (!text.empty() && text[0] == '-') return "size " + quoted + " is negative" + expected;
    if (!split_number(text, digits, suffix)) return "invalid size " + quoted + expected;

    const std::string unit = lowercase(suffix);
    int shift = -1;
    if (unit.empty() || unit == "b") shift = 0;
    if (unit == "kib") shift = 10;
    if (unit == "mib") shift = 20;
    if (unit == "gib") shift = 30;
    if (unit == "tib") shift = 40;
    if (shift < 0) {
        if (unit == "kb" || unit == "mb" || unit == "gb" || unit == "tb" || unit == "k" ||
            unit == "m" || unit == "g" || unit == "t") {
            return "ambiguous size " + quoted +
                   ": use a binary suffix (KiB, MiB, GiB, TiB; 1 MiB = 1048576 bytes)";
        }
        return "invalid size " + quoted + expected;
    }

    unsigned long long value = 0;
    if (!to_unsigned(digits, value) || value > (std::numeric_limits<std::size_t>::max() >> shift)) {
        return "size " + quoted + " is too large";
    }
    if (value == 0) return "size " + quoted + " must be greater than zero";
    bytes = static_cast<std::size_t>(value) << shift;
    return "";
}

std::string parse_int(const std::string& text, long min, long max, long& value) {
    const std::string range =
        max == std::numeric_limits<int>::max()
            ? " (expected a whole number, at least " + std::to_string(min) + ")"
            : " (expected a whole number from " + std::to_string(min) + " to " +
                  std::to_string(max) + ")";
    const bool negative = !text.empty() && text[0] == '-';
    std::string digits;
    std::string rest;
    if (!split_number(negative ? text.substr(1) : text, digits, rest) || !rest.empty()) {
        return "invalid number " + quoted_argument(text) + range;
    }
    unsigned long long magnitude = 0;
    if (!to_unsigned(digits, magnitude) ||
        magnitude > static_cast<unsigned long long>(std::numeric_limits<long>::max())) {
        return "number " + quoted_argument(text) + " is out of range" + range;
    }
    const long parsed = negative ? -static_cast<long>(magnitude) : static_cast<long>(magnitude);
    if (parsed < min || parsed > max) {
        return "number " + quoted_argument(text) + " is out of range" + range;
    }
    value = parsed;
    return "";
}

namespace {

// The folder above `path`: "." for a bare name, "/" for a name at the root.
std::string parent_of(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// Why `path` is not a folder: "" if it is one, else "'x' does not exist", "'x' is a file, not a
// folder", ... `exists` says whether anything is there.
std::string not_a_folder(const std::string& path, bool& exists) {
    struct stat info {};
    exists = stat(path.c_str(), &info) == 0;
    if (exists) {
        if (S_ISDIR(info.st_mode)) return "";
        return quoted_path(path) + (S_ISREG(info.st_mode) ? " is a file, not a folder"
                                                          : " is not a folder");
    }
    if (errno == ENOENT) return quoted_path(path) + " does not exist";
    return quoted_path(path) + ": " + std::strerror(errno);  // e.g. part of its path is a file
}

// Whether this process can make a file in the folder `dir`: it makes one and removes it again
// (permission bits alone would not tell: root may write anywhere, yet not into /proc or a
// read-only file system). "" if it can, else the system's reason.
std::string cannot_make_a_file_in(const std::string& dir) {
    std::string name = dir + "/.csv-check-XXXXXX";
    const int fd = mkstemp(name.data());
    if (fd < 0) return std::strerror(errno);
    close(fd);
    unlink(name.c_str());
    return "";
}

}  // namespace

std::string prepare_csv_dir(const std::string& dir) {
    bool exists = false;
    std::string problem = not_a_folder(dir, exists);
    if (exists) {
        if (!problem.empty()) return problem;
        problem = cannot_make_a_file_in(dir);
        return problem.empty() ? "" : "cannot write into " + quoted_path(dir) + ": " + problem;
    }
    // Not there yet: it is made when the first table is written, so it must be possible to make
    // it in the folder above, which must exist (only the last folder of the path is made).
    const std::string parent = parent_of(dir);
    const std::string made = "cannot create the folder " + quoted_path(dir) + ": ";
    problem = not_a_folder(parent, exists);
    if (!problem.empty()) {
        return made + problem + (exists ? "" : " (--csv makes only the last folder of the path)");
    }
    if (mkdir(dir.c_str(), 0777) != 0) return made + std::strerror(errno);
    rmdir(dir.c_str());
    return "";
}

// Collapses "//" and "/./", and drops a trailing "/".
std::string tidy_path(const std::string& path) {
    std::string tidy;
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string::npos) end = path.size();
        const std::string part = path.substr(start, end - start);
        if (!part.empty() && part != ".") tidy += (tidy.empty() && path[0] != '/' ? "" : "/") + part;
        start = end + 1;
    }
    if (tidy.empty()) return path.empty() || path[0] != '/' ? "." : "/";
    return tidy;
}

std::string absolute_path(const std::string& path) {
    if (!path.empty() && path[0] == '/') return tidy_path(path);
    char here[4096];
    if (getcwd(here, sizeof here) == nullptr) return tidy_path(path);
    return tidy_path(std::string(here) + "/" + path);
}

std::string closest_name(const std::string& typed, const std::vector<std::string>& names) {
    // Optimal string alignment distance: edits of one letter, or two neighbours swapped.
    const auto distance = [](const std::string& a, const std::string& b) {
        std::vector<std::vector<std::size_t>> d(a.size() + 1,
                                                std::vector<std::size_t>(b.size() + 1, 0));
        for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
        for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
        for (std::size_t i = 1; i <= a.size(); ++i) {
            for (std::size_t j = 1; j <= b.size(); ++j) {
                const std::size_t change = a[i - 1] == b[j - 1] ? 0 : 1;
                d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + change});
                if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                    d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.size()][b.size()];
    };
    std::string best;
    std::size_t best_distance = 0;
    const std::string lower = lowercase(typed);
    for (const std::string& name : names) {
        const std::size_t d = distance(lower, name);
        if (best.empty() || d < best_distance) {
            best = name;
            best_distance = d;
        }
    }
    // Close enough: at most 2 edits, and at most a third of the name (so "ab" never suggests "cd").
    const std::size_t allowed = std::min<std::size_t>(2, std::max<std::size_t>(1, best.size() / 3));
    return !best.empty() && best_distance <= allowed ? best : "";
}

std::string parse_options(int argc, const char* const argv[], Options& options) {
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value;
        bool has_value = false;
        // Accept both "--size 4MiB" and "--size=4MiB".
        const std::size_t equals = arg.find('=');
        if (arg.rfind("--", 0) == 0 && equals != std::string::npos) {
            value = arg.substr(equals + 1);
            arg = arg.substr(0, equals);
            has_value = true;
        }
        const bool takes_value = arg == "--device" || arg == "--size" || arg == "--iters" ||
                                 arg == "--workers" || arg == "--csv";
        if (takes_value && !has_value) {
            if (i + 1 >= argc) return "option " + arg + " needs a value";
            value = argv[++i];
        } else if (!takes_value && has_value) {
            return "option " + quoted_argument(arg) + " takes no value";
        }

        std::string problem;
        long number = 0;
        if (arg == "--help" || arg == "-h") {
            options.help = true;
        } else if (arg == "--list") {
            options.list = true;
        } else if (arg == "--limits") {
            options.limits = true;
        } else if (arg == "--quick") {
            options.quick = true;
        } else if (arg == "--pause") {
            options.pause = true;
        } else if (arg == "--csv") {
            if (value.empty()) problem = "needs a folder";
            options.csv_dir = value.empty() ? value : tidy_path(value);
        } else if (arg == "--device") {
            problem = parse_int(value, 0, 1023, number);
            options.device = static_cast<int>(number);
        } else if (arg == "--iters") {
            problem = parse_int(value, 1, 1000000, number);
            options.iters = static_cast<int>(number);
        } else if (arg == "--workers") {
            // No upper limit here: each section that takes --workers has its own (--help).
            problem = parse_int(value, 1, std::numeric_limits<int>::max(), number);
            options.workers = static_cast<int>(number);
        } else if (arg == "--size") {
            problem = parse_size(value, options.size);
        } else if (arg.size() > 1 && arg[0] == '-') {
            const std::string closest =
                closest_name(arg, {"--help", "--list", "--limits", "--quick", "--pause", "--csv",
                                   "--device", "--iters", "--workers", "--size"});
            return "unknown option " + quoted_argument(arg) +
                   (closest.empty() ? " (see --help)"
                                    : " (did you mean " + closest + "? --help lists them all)");
        } else {
            options.sections.push_back(arg);
        }
        if (!problem.empty()) return arg + ": " + problem;
    }
    return "";
}

Takes& Takes::size(std::size_t multiple, std::size_t most, std::size_t least) {
    takes_size = true;
    size_multiple = multiple;
    size_min = least;
    size_max = most;
    return *this;
}

Takes& Takes::holds(int on_device, int on_host) {
    device_buffers = on_device;
    host_buffers = on_host;
    return *this;
}

Takes& Takes::iters(int least, int most) {
    takes_iters = true;
    iters_min = least;
    iters_max = most;
    return *this;
}

Takes& Takes::workers(int least, int most) {
    takes_workers = true;
    workers_min = least;
    workers_max = most;
    return *this;
}

std::string describe(const Takes& takes) {
    std::vector<std::string> parts;
    if (takes.takes_size) {
        std::string limits = takes.size_multiple > 1
                                 ? "a multiple of " + format_bytes(takes.size_multiple) + ", "
                                 : "";
        if (takes.size_min > takes.size_multiple) {
            limits += "at least " + format_bytes(takes.size_min) + ", ";
        }
        parts.push_back("--size (" + limits + "at most " + format_bytes(takes.size_max) + ")");
    }
    if (takes.takes_iters) {
        parts.push_back("--iters (" + std::to_string(takes.iters_min) + " to " +
                        std::to_string(takes.iters_max) + ")");
    }
    if (takes.takes_workers) {
        parts.push_back("--workers (" + std::to_string(takes.workers_min) + " to " +
                        std::to_string(takes.workers_max) + ")");
    }
    std::string text;
    for (const std::string& part : parts) text += (text.empty() ? "" : ", ") + part;
    return text;
}

std::string check_limits(const Options& options, const Takes& takes) {
    if (takes.takes_size && options.size != 0) {
        const std::string size = "--size " + size_in_words(options.size);
        if (options.size % takes.size_multiple != 0) {
            return size + " is not a multiple of " + format_bytes(takes.size_multiple);
        }
        if (options.size > takes.size_max) {
            return size + " is more than " + format_bytes(takes.size_max);
        }
        if (options.size < takes.size_min) {
            return size + " is less than " + format_bytes(takes.size_min);
        }
    }
    if (takes.takes_iters && options.iters != 0 && options.iters < takes.iters_min) {
        return "--iters " + std::to_string(options.iters) + " is less than " +
               std::to_string(takes.iters_min);
    }
    if (takes.takes_iters && options.iters > takes.iters_max) {
        return "--iters " + std::to_string(options.iters) + " is more than " +
               std::to_string(takes.iters_max);
    }
    if (takes.takes_workers && options.workers != 0) {
        const std::string workers = "--workers " + std::to_string(options.workers);
        if (options.workers < takes.workers_min) {
            return workers + " is less than " + std::to_string(takes.workers_min);
        }
        if (options.workers > takes.workers_max) {
            return workers + " is more than " + std::to_string(takes.workers_max);
        }
    }
    return "";
}

}  // namespace tutorial
