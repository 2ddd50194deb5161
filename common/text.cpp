#include "common/text.hpp"

#include <cstdarg>
#include <cstdio>

namespace tutorial {

std::string format(const char* pattern, ...) {
    va_list args;
    va_start(args, pattern);
    va_list copy;
    va_copy(copy, args);
    const int length = std::vsnprintf(nullptr, 0, pattern, copy);
    va_end(copy);
    std::string text(length > 0 ? static_cast<std::size_t>(length) : 0, '\0');
    if (length > 0) std::vsnprintf(text.data(), text.size() + 1, pattern, args);
    va_end(args);
    return text;
}

std::string format_bytes(std::size_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    double value = static_cast<double>(bytes);
    while (value >= 1024.0 && unit < 4) {
        value /= 1024.0;
        ++unit;
    }
    if (value == static_cast<double>(static_cast<unsigned long long>(value))) {
        return format("%llu %s", static_cast<unsigned long long>(value), units[unit]);
    }
    return format("%.1f %s", value, units[unit]);
}

}  // namespace tutorial
