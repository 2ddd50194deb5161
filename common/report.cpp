#include "common/report.hpp"

#include <algorithm>
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

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::add_row(std::vector<std::string> cells) {
    cells.resize(columns_.size());
    rows_.push_back(std::move(cells));
}

void Table::print() const {
    std::vector<std::size_t> widths;
    for (const Column& column : columns_) widths.push_back(column.header.size());
    for (const auto& row : rows_) {
        for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    }
    const auto print_row = [&](const std::vector<std::string>& cells) {
        std::string line;
        for (std::size_t i = 0; i < cells.size(); ++i) {
            const std::string padding(widths[i] - cells[i].size(), ' ');
            const bool last = i + 1 == cells.size();
            if (columns_[i].align == Align::right)
                line += padding + cells[i];
            else
                line += cells[i] + (last ? "" : padding);
            if (!last) line += "  ";
        }
        std::printf("%s\n", line.c_str());
    };
    std::vector<std::string> headers;
    std::vector<std::string> rules;
    for (std::size_t i = 0; i < columns_.size(); ++i) {
        headers.push_back(columns_[i].header);
        rules.push_back(std::string(widths[i], '-'));
    }
    print_row(headers);
    print_row(rules);
    for (const auto& row : rows_) print_row(row);
}

}  // namespace tutorial
