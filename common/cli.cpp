#include "common/cli.hpp"

#include "common/report.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
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
    const std::string range = " (expected a whole number from " + std::to_string(min) + " to " +
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

std::string prepare_csv_dir(const std::string& dir) {
    struct stat info {};
    if (stat(dir.c_str(), &info) == 0) {
        if (!S_ISDIR(info.st_mode)) return quoted_path(dir) + " is not a folder";
        if (access(dir.c_str(), W_OK | X_OK) != 0) return "cannot write into " + quoted_path(dir);
        return "";
    }
    // Not there yet: it is made when the first table is written, so its parent must be a folder
    // this process can write into.
    std::string parent = dir;
    while (parent.size() > 1 && parent.back() == '/') parent.pop_back();
    const std::size_t slash = parent.rfind('/');
    parent = slash == std::string::npos ? "." : slash == 0 ? "/" : parent.substr(0, slash);
    if (stat(parent.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
        return "cannot create the folder " + quoted_path(dir) + ": " + quoted_path(parent) +
               " is not a folder";
    }
    if (access(parent.c_str(), W_OK | X_OK) != 0) {
        return "cannot create the folder " + quoted_path(dir) + ": cannot write into " +
               quoted_path(parent);
    }
    return "";
}

std::string absolute_path(const std::string& path) {
    if (!path.empty() && path[0] == '/') return path;
    char here[4096];
    if (getcwd(here, sizeof here) == nullptr) return path;
    return std::string(here) + "/" + path;
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
        } else if (arg == "--quick") {
            options.quick = true;
        } else if (arg == "--pause") {
            options.pause = true;
        } else if (arg == "--csv") {
            if (value.empty()) problem = "needs a folder";
            options.csv_dir = value;
        } else if (arg == "--device") {
            problem = parse_int(value, 0, 1023, number);
            options.device = static_cast<int>(number);
        } else if (arg == "--iters") {
            problem = parse_int(value, 1, 1000000, number);
            options.iters = static_cast<int>(number);
        } else if (arg == "--workers") {
            problem = parse_int(value, 1, 1024, number);
            options.workers = static_cast<int>(number);
        } else if (arg == "--size") {
            problem = parse_size(value, options.size);
        } else if (arg.size() > 1 && arg[0] == '-') {
            return "unknown option " + quoted_argument(arg) + " (see --help)";
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

Takes& Takes::iters(int least) {
    takes_iters = true;
    iters_min = least;
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
        parts.push_back(takes.iters_min > 1
                            ? "--iters (at least " + std::to_string(takes.iters_min) + ")"
                            : "--iters");
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
