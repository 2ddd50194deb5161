#include "counted.hpp"

#include "common/harness/report.hpp"

#include <cstdint>
#include <cstdio>

double percent_of(std::uint64_t bytes, std::size_t buffer) {
    return buffer == 0 ? 0.0 : 100.0 * static_cast<double>(bytes) / static_cast<double>(buffer);
}

double mib_of(std::uint64_t bytes) {
    return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

void print_traffic(const tutorial::UmCounters& counters, const tutorial::StepTraffic& traffic,
                   const std::string& what) {
    tutorial::Table table(tutorial::um_columns("step"));
    table.named("counted");
    for (const std::string& name : traffic.order())
        table.add_row(tutorial::um_cells(name, traffic.of(tutorial::Step{name.c_str()})));
    std::printf("\nWhat the driver moved in each step, %s (its Unified Memory counters):\n",
                what.c_str());
    std::printf("%s\n", counters.control_line().c_str());
    table.print();
}
