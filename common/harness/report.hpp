// Printing results: aligned tables and printf-style formatting into strings. Printing only: this
// file asks nothing of CUDA.
#pragma once

#include "common/text.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace tutorial {

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
//
// With --csv DIR, print() also writes the table to DIR/<chapter>_<section>_<name>.csv: the name
// given with named(), or else the table's number within its section (1, 2, ...).
class Table {
public:
    explicit Table(std::vector<Column> columns);
    Table& named(std::string name);
    void add_row(std::vector<std::string> cells);
    void print() const;

private:
    std::vector<Column> columns_;
    std::vector<std::vector<std::string>> rows_;
    std::string name_;
};

// Where Table::print writes CSV files: set once per run by run_chapter (for --csv). `comment`
// becomes each file's first line, after "# ": the device, driver, date and command line.
void write_tables_to(const std::string& dir, const std::string& comment);
// How many CSV files this run has written (the folder is made with the first).
int csv_files_written();
// Starts a section: its tables are named "<prefix>_<name>" and numbered from 1 again.
void start_table_group(const std::string& prefix);

// One CSV line (RFC 4180): cells with a comma, a quote or a line break are quoted.
std::string csv_line(const std::vector<std::string>& cells);

}  // namespace tutorial
