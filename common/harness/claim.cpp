#include "common/harness/claim.hpp"

#include "common/harness/report.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

namespace tutorial {

Claim at_least(std::string statement, double measured, double threshold, std::string unit,
               std::string if_not) {
    return {std::move(statement), measured,          threshold,        true,
            std::move(unit),      std::move(if_not), Evidence::timing, "", ""};
}

Claim at_most(std::string statement, double measured, double threshold, std::string unit,
              std::string if_not) {
    return {std::move(statement), measured,          threshold,        false,
            std::move(unit),      std::move(if_not), Evidence::timing, "", ""};
}

Claim counted_at_least(std::string statement, double measured, double threshold, std::string unit,
                       std::string if_not) {
    return {std::move(statement), measured,          threshold,         true,
            std::move(unit),      std::move(if_not), Evidence::counted, "", ""};
}

Claim counted_at_most(std::string statement, double measured, double threshold, std::string unit,
                      std::string if_not) {
    return {std::move(statement), measured,          threshold,         false,
            std::move(unit),      std::move(if_not), Evidence::counted, "", ""};
}

Claim documented(std::string statement, bool held, std::string seen, std::string if_not,
                 std::string where) {
    // A yes/no measurement: 1 held, 0 not, against a threshold of 1.
    return {std::move(statement), held ? 1.0 : 0.0, 1.0,
            true,                 "",               std::move(if_not),
            Evidence::documented, std::move(seen),  std::move(where)};
}

Claim documented_error(std::string statement, std::string returned, std::string expected,
                       std::string if_not, std::string where) {
    const bool held = returned == expected;
    std::string seen = "returned " + returned + (held ? "" : ", not " + expected);
    return documented(std::move(statement), held, std::move(seen), std::move(if_not),
                      std::move(where));
}

Claim observed(std::string statement, bool as_before, std::string seen, std::string open) {
    return {std::move(statement), as_before ? 1.0 : 0.0, 1.0,
            true,                 "",                    "",
            Evidence::observed,   std::move(seen),       std::move(open)};
}

namespace {

// Two or three significant digits: 8.31, 54.9, 1363.
std::string number(double value) {
    const double size = value < 0 ? -value : value;
    return format(size >= 100 ? "%.0f" : size >= 10 ? "%.1f" : "%.3g", value);
}

std::string measured_text(const Claim& claim) {
    if (!claim.seen.empty()) return claim.seen;
    return "measured " + number(claim.measured) + claim.unit;
}

std::string needs_text(const Claim& claim) {
    if (!claim.seen.empty()) return "";
    return std::string(", needs ") + (claim.at_least ? ">= " : "<= ") + number(claim.threshold) +
           claim.unit;
}

}  // namespace

ClaimOutcome judge_claim(const Claim& claim, const std::string& why_not_judged) {
    if (claim.evidence == Evidence::observed && why_not_judged.empty()) {
        // Never a verdict: the reference leaves it open, so another driver may differ.
        if (claim.measured >= claim.threshold) {
            std::printf("CLAIM observed on %s: %s: %s\n", this_driver().c_str(),
                        claim.statement.c_str(), measured_text(claim).c_str());
        } else {
            std::printf(
                "CLAIM observed otherwise on %s: %s: %s; the reference leaves this open (%s), "
                "so the verdict does not rest on it\n",
                this_driver().c_str(), claim.statement.c_str(), measured_text(claim).c_str(),
                claim.where.c_str());
        }
        return ClaimOutcome::observed;
    }
    std::string why = why_not_judged;
    if (why.empty() && (claim.evidence == Evidence::timing || claim.evidence == Evidence::counted))
        why = why_timing_not_judged();
    if (!why.empty()) {
        std::printf("CLAIM not judged: %s: %s; %s\n", claim.statement.c_str(),
                    measured_text(claim).c_str(), why.c_str());
        return ClaimOutcome::not_judged;
    }
    const bool held =
        claim.at_least ? claim.measured >= claim.threshold : claim.measured <= claim.threshold;
    if (held) {
        std::printf("CLAIM held: %s: %s%s\n", claim.statement.c_str(), measured_text(claim).c_str(),
                    needs_text(claim).c_str());
        return ClaimOutcome::held;
    }
    std::printf("CLAIM NOT held: %s: %s%s. Most likely: %s\n", claim.statement.c_str(),
                measured_text(claim).c_str(), needs_text(claim).c_str(), claim.if_not.c_str());
    return ClaimOutcome::not_held;
}

std::string why_timing_not_judged() {
    const char* flag = std::getenv("TUTORIAL_UNDER_SANITIZER");
    const char* injection = std::getenv("NVTX_INJECTION64_PATH");  // as compute-sanitizer 2025 sets
    const bool sanitizer =
        (flag != nullptr && std::strcmp(flag, "1") == 0) ||
        (injection != nullptr && std::strstr(injection, "sanitizer") != nullptr) ||
        std::getenv("NV_SANITIZER_INJECTION_PORT_BASE") != nullptr;
    return sanitizer ? "the run is under compute-sanitizer, which distorts timings and memory use"
                     : "";
}

bool running_in_virtual_machine() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("flags", 0) == 0) return line.find(" hypervisor") != std::string::npos;
    }
    return false;
}

// The first word of /proc/driver/nvidia/version that looks like a version (the line's wording
// varies); CUDA's own calls report only the CUDA version the driver supports.
std::string kernel_module_version() {
    std::ifstream file("/proc/driver/nvidia/version");
    std::string word;
    while (file >> word) {
        const bool version = std::isdigit(static_cast<unsigned char>(word[0])) &&
                             word.find('.') != std::string::npos &&
                             word.find_first_not_of("0123456789.") == std::string::npos;
        if (version) return word;
    }
    return "unknown";
}

std::string this_driver() {
    return "driver " + kernel_module_version();
}

}  // namespace tutorial
