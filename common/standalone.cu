// The learner's layer of common/ in one file, for building a lesson on its own:
//
//   nvcc -std=c++17 -I. 05_prefetch_advise/fault_vs_prefetch.cu common/standalone.cu -o fault_vs_prefetch
//   ./fault_vs_prefetch
//
// from the course's folder. A lesson's own main() (at its end) runs its walkthrough and prints
// what it found; the chapter's program runs the same walkthrough under its checks instead.
// (.ci/check-sections keeps this list whole; .ci/check-lessons-alone builds every lesson so.)
#include "common/buffer.cpp"
#include "common/busy.cu"
#include "common/check.cpp"
#include "common/device.cpp"
#include "common/driver.cpp"
#include "common/patterns.cu"
#include "common/process.cpp"
#include "common/text.cpp"
#include "common/vmm.cpp"
