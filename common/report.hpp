// Printing results: aligned tables and printf-style formatting into strings. Printing only: this
// file asks nothing of CUDA.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tutorial {

// printf into a std::string, for table cells: format("%.1f", gbps).
std::string format(const char* pattern, ...) __attribute__((format(printf, 1, 2)));

// "256 MiB", "4 KiB", "1.5 GiB", "100 B".
std::string format_bytes(std::size_t bytes);

enum class Align { left, right };

struct Column {
    std::string header;
    Align align = Align::left;
};

// Collects rows, then prints them with every column as wide as its widest cell:
//
//   Table table({{"copy"}, {"GB/s", Align::right}});
//   table.add_row({"H2D pinned", format("%.1f", 54.9)});
//   table.print();
class Table {
public:
    explicit Table(std::vector<Column> columns);
    void add_row(std::vector<std::string> cells);
    void print() const;

private:
    std::vector<Column> columns_;
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace tutorial
