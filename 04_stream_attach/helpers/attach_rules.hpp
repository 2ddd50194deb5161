// What the attach sections share: when the attach rules can be shown, and how a broken rule ends.
#pragma once

#include "common/harness/child.hpp"

#include <csignal>
#include <string>

// Why a claim about the attach rules is not judged on this device, or "" where it is: the rules
// (a fault when the CPU touches memory a kernel may use) exist only where
// concurrentManagedAccess = 0.
inline std::string attach_rule_not_judged(bool concurrent) {
    return concurrent ? "concurrentManagedAccess = 1 here, so the CPU may touch any managed "
                        "memory during a kernel and the rule cannot be shown"
                      : "";
}

// Why a claim about which streams' kernels may use an allocation is not judged on this device,
// or "" where it is: where concurrentManagedAccess = 1 a kernel in any stream may use any managed
// memory, whatever its association.
inline std::string association_not_judged(bool concurrent) {
    return concurrent ? "concurrentManagedAccess = 1 here, so a kernel in any stream may use "
                        "managed memory whatever it is attached to, and the rule cannot be shown"
                      : "";
}

// Where concurrentManagedAccess = 0 the Programming Guide (N.2.2.1) names the outcome of a CPU
// access to managed memory a running kernel may use: a segmentation fault.
inline bool segfaulted(const tutorial::ChildResult& child) {
    return child.crashed() && child.signal == SIGSEGV;
}
