#include "common/report.hpp"

#include "common/check.hpp"

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

Result check_device_facts(Context& ctx, const char* first_source, const char* second_source,
                          const std::vector<DeviceFact>& facts, const std::string& conclusion) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx.device));
    std::printf(
        "Device %d, %s (compute capability %d.%d). Each property is read twice,\n"
        "through %s and through %s; the two must agree.\n\n",
        ctx.device, prop.name, prop.major, prop.minor, first_source, second_source);
    Table table({{"property"},
                 {first_source, Align::right},
                 {second_source, Align::right},
                 {"what it means here"}});
    int disagreements = 0;
    for (const DeviceFact& fact : facts) {
        const bool agree = fact.first == fact.second;
        disagreements += agree ? 0 : 1;
        table.add_row({fact.name, std::to_string(fact.first),
                       std::to_string(fact.second) + (agree ? "" : " (!)"), fact.meaning});
    }
    table.print();
    if (!conclusion.empty()) std::printf("\n%s\n", conclusion.c_str());
    return ctx.verdict(disagreements == 0, format("%d of %zu properties agree between %s and %s",
                                                  static_cast<int>(facts.size()) - disagreements,
                                                  facts.size(), first_source, second_source));
}

int device_attribute(int device, cudaDeviceAttr attribute) {
    int value = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
    return value;
}

std::size_t free_device_memory() {
    std::size_t free_bytes = 0;
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return free_bytes;
}

}  // namespace tutorial
