#include "counted.hpp"

#include <cstdio>

double percent_of(std::uint64_t bytes, std::size_t buffer) {
    return buffer == 0 ? 0.0 : 100.0 * static_cast<double>(bytes) / static_cast<double>(buffer);
}

double mib_of(std::uint64_t bytes) {
    return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

CountedSteps::CountedSteps(tutorial::UmCounters& counters)
    : counters_(counters), table_(tutorial::um_columns("step")) {
    table_.named("counted");
}

tutorial::UmTraffic CountedSteps::step(const std::string& name, const std::function<void()>& run) {
    const tutorial::UmTraffic traffic = counters_.measure(run);
    table_.add_row(tutorial::um_cells(name, traffic));
    return traffic;
}

void CountedSteps::print(const std::string& title) const {
    std::printf("\n%s\n", title.c_str());
    table_.print();
    if (!counters_.available()) {
        std::printf("(\"-\": not counted here, %s)\n", counters_.why_not().c_str());
    }
}
