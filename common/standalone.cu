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
#include "common/step.cpp"
#include "common/text.cpp"
#include "common/vmm.cpp"

// Where there is no GPU to run on, a lesson built alone says so as the course's programs do: its
// first checked CUDA call that fails for want of a device prints one SKIP line and the program
// exits with 77 (common/check.hpp), rather than an error that points a learner at the wrong fix.
// Nothing here calls CUDA before main(): a lesson such as 03_managed/fork.cu shows what happens
// when a process forks before its first CUDA call.
namespace {
const bool built_alone = (tutorial::skip_without_device = true);
}  // namespace
