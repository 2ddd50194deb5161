// The learner's layer of common/ in one file, for building a lesson on its own:
//
//   nvcc -std=c++17 -I. 05_prefetch_advise/fault_vs_prefetch.cu common/standalone.cu -o fault_vs_prefetch
//   ./fault_vs_prefetch
//
// from the course's folder. A lesson's own main() (at its end) runs its walkthrough and prints
// what it found; the chapter's program runs the same walkthrough under its checks instead.
// (.ci/check-sections keeps this list whole; .ci/check-lessons-alone builds every lesson so.)
// Without a usable GPU, such a lesson prints one SKIP line and exits with 77 (below).
#include "common/buffer.cpp"
#include "common/busy.cu"
#include "common/check.cpp"
#include "common/device.cpp"
#include "common/driver.cpp"
#include "common/patterns.cu"
#include "common/process.cpp"
#include "common/text.cpp"
#include "common/vmm.cpp"

// Where there is no GPU to run on, a lesson built alone says so as the course's programs do,
// before its main() starts: one SKIP line and exit code 77 (the course's "skipped"), rather than
// the first CUDA call's error, which points a learner at the wrong fix.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {
const bool device_checked_before_main = [] {
    const std::string why = tutorial::why_no_usable_device();
    if (!why.empty()) {
        std::printf("SKIP: %s: %s\n", program_invocation_short_name, why.c_str());
        std::exit(77);
    }
    return true;
}();
}  // namespace
