#include "common/harness/report.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include <sys/stat.h>

namespace tutorial {

namespace {

struct CsvOutput {
    std::string dir;  // empty: no CSV files
    std::string comment;
    std::string prefix = "table";
    int tables = 0;  // printed so far in this group
    int files = 0;   // CSV files written in this run
};

CsvOutput& csv_output() {
    static CsvOutput output;
    return output;
}

void write_csv(const std::string& name, const std::vector<std::string>& headers,
               const std::vector<std::vector<std::string>>& rows) {
    CsvOutput& out = csv_output();
    // The folder is made with the first table, so a run that writes none leaves nothing behind
    // (run_chapter has checked that it can be made).
    if (out.files == 0 && mkdir(out.dir.c_str(), 0777) != 0 && errno != EEXIST) {
        std::fprintf(stderr, "--csv: cannot create the folder %s: %s\n", out.dir.c_str(),
                     std::strerror(errno));
        return;
    }
    const std::string path = out.dir + "/" + out.prefix + "_" + name + ".csv";
    std::FILE* file = std::fopen(path.c_str(), "w");
    if (file == nullptr) {
        std::fprintf(stderr, "--csv: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
        return;
    }
    ++out.files;
    std::fprintf(file, "# %s\n%s\n", out.comment.c_str(), csv_line(headers).c_str());
    for (const auto& row : rows) std::fprintf(file, "%s\n", csv_line(row).c_str());
    if (std::fclose(file) != 0) {
        std::fprintf(stderr, "--csv: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    }
}

}  // namespace

void write_tables_to(const std::string& dir, const std::string& comment) {
    csv_output().dir = dir;
    csv_output().comment = comment;
}

int csv_files_written() { return csv_output().files; }

void start_table_group(const std::string& prefix) {
    csv_output().prefix = prefix;
    csv_output().tables = 0;
}

std::string csv_line(const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) {
        const std::string& cell = cells[i];
        if (i > 0) line += ',';
        if (cell.find_first_of(",\"\r\n") == std::string::npos) {
            line += cell;
            continue;
        }
        line += '"';
        for (char c : cell) line += c == '"' ? std::string("\"\"") : std::string(1, c);
        line += '"';
    }
    return line;
}

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

Table& Table::named(std::string name) {
    name_ = std::move(name);
    return *this;
}

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
    CsvOutput& out = csv_output();
    ++out.tables;
    if (!out.dir.empty())
        write_csv(name_.empty() ? std::to_string(out.tables) : name_, headers, rows_);
}

}  // namespace tutorial
