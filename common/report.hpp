// Printing results: aligned tables, printf-style formatting into strings, and the device report
// each chapter's `properties` section makes.
#pragma once

#include "common/chapter.hpp"

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace tutorial {

// printf into a std::string, for table cells: format("%.1f", gbps).
std::string format(const char* pattern, ...) __attribute__((format(printf, 1, 2)));

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

// One device property read through two independent paths (say cudaDeviceProp and
// cudaDeviceGetAttribute, or the runtime and the driver API).
struct DeviceFact {
    std::string name;
    int first;
    int second;
    std::string meaning;  // what the value means for the code in this chapter
};

// The device report every chapter's `properties` section makes: the device's name and compute
// capability, a table of the facts, then `conclusion` (what they mean here), and the section's
// verdict on whether the two sources agree on every fact.
Result check_device_facts(Context& ctx, const char* first_source, const char* second_source,
                          const std::vector<DeviceFact>& facts, const std::string& conclusion = "");

// cudaDeviceGetAttribute, checked.
int device_attribute(int device, cudaDeviceAttr attribute);

// The current device's free memory, from cudaMemGetInfo.
std::size_t free_device_memory();

}  // namespace tutorial
