// The sections of chapter 04, one source file each.
#pragma once

#include "common/chapter.hpp"
#include "common/child.hpp"

#include <csignal>
#include <string>
#include <vector>

tutorial::Result run_properties(tutorial::Context& ctx);
tutorial::Result run_attach_host(tutorial::Context& ctx);
tutorial::Result run_attach_wrong_variable(tutorial::Context& ctx);
tutorial::Result run_threads(tutorial::Context& ctx);
tutorial::Result run_modular(tutorial::Context& ctx);
tutorial::Result run_host_callback(tutorial::Context& ctx);

// Why a claim about the attach rules is not judged on this device, or "" where it is: the rules
// (a fault when the CPU touches memory a kernel may use) exist only where
// concurrentManagedAccess = 0.
inline std::string attach_rule_not_judged(bool concurrent) {
    return concurrent ? "concurrentManagedAccess = 1 here, so the CPU may touch any managed "
                        "memory during a kernel and the rule cannot be shown"
                      : "";
}

// Where concurrentManagedAccess = 0 the Programming Guide (N.2.2.1) names the outcome of a CPU
// access to managed memory a running kernel may use: a segmentation fault.
inline bool segfaulted(const tutorial::ChildResult& child) {
    return child.crashed() && child.signal == SIGSEGV;
}

// Child roles.
int child_attach_host(const std::vector<std::string>& args);       // attach_host
int child_wrong_variable(const std::vector<std::string>& args);    // attach_wrong_variable
int child_attach_rules(const std::vector<std::string>& args);      // attach_wrong_variable
int child_attach_pending(const std::vector<std::string>& args);    // attach_wrong_variable
int child_construct_global(const std::vector<std::string>& args);  // modular
