// Section thrash: the CPU and the GPU take turns writing managed memory. On the same page, the
// page migrates back and forth every round; on separate pages each side keeps its own. Alone:
//   nvcc -std=c++17 -I. 03_managed/thrash.cu common/standalone.cu -o build/thrash
//   (or in 03_managed/: nvcc -std=c++17 -I.. thrash.cu ../common/standalone.cu -o ../build/thrash)
#include "common/check.hpp"
#include "common/step.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>

namespace {

// Far enough apart that the two addresses never share a page, whatever page size the driver
// uses for managed memory (4 KiB on the CPU, up to 2 MiB on the GPU).
constexpr std::size_t far_apart = (4 << 20) / sizeof(int);

// The three ways the rounds run. Each names its stretches of rounds as the walkthrough's steps:
// round 1 (the pages' first touches), rounds 2 to 5, rounds 6 to 20 (by then the driver may
// change its tactics), and the rest; each one timed wherever steps are watched.
struct Case {
    bool cpu_writes;        // the CPU writes element 0 each round
    std::size_t gpu_index;  // the element the kernel writes
    tutorial::Step rounds[4];
};

constexpr Case cases[] = {
    {false,
     far_apart,
     {{"GPU only: round 1"},
      {"GPU only: rounds 2-5"},
      {"GPU only: rounds 6-20"},
      {"GPU only: the rest"}}},
    {true,
     far_apart,
     {{"separate pages: round 1"},
      {"separate pages: rounds 2-5"},
      {"separate pages: rounds 6-20"},
      {"separate pages: the rest"}}},
    {true,
     1,
     {{"same page: round 1"},
      {"same page: rounds 2-5"},
      {"same page: rounds 6-20"},
      {"same page: the rest"}}},
};
constexpr int first_rounds[4] = {0, 1, 5, 20};  // where each stretch begins (0-based rounds)

__global__ void gpu_write(int* where, int value) {
    *where = value;
}

// Step 1. One managed buffer for both sides; the CPU writes element 0 first.
int* shared_buffer() {
    int* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, (far_apart + 1) * sizeof(int)));
    data[0] = -1;
    return data;
}

// Step 2. One round: the CPU writes element 0, then a kernel writes its element and the host
// waits for it. Where both elements share a page, that page moves to the CPU and back to the GPU
// every round.
void one_round(int* data, const Case& c, int r) {
    if (c.cpu_writes) data[0] = r;
    gpu_write<<<1, 1>>>(data + c.gpu_index, 2 * r + 1);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}

// What the walkthrough found: for each case, whether the buffer ends with what the last round
// wrote.
struct Found {
    bool right[3] = {false, false, false};
};

Found walkthrough(int rounds) {
    Found found;
    for (int k = 0; k < 3; ++k) {
        const Case& c = cases[k];
        int* data = shared_buffer();
        // Each stretch the rounds reach is a step of its own, from its first round to the next's.
        for (int s = 0; s < 4 && first_rounds[s] < rounds; ++s) {
            const int end = s < 3 ? std::min(first_rounds[s + 1], rounds) : rounds;
            const tutorial::During during(c.rounds[s]);
            for (int r = first_rounds[s]; r < end; ++r) one_round(data, c, r);
        }
        const int last = rounds - 1;
        found.right[k] = data[c.gpu_index] == 2 * last + 1 && data[0] == (c.cpu_writes ? last : -1);
        CUDA_CHECK(cudaFree(data));
    }
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const int rounds = 2000;
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(rounds);
    times.print();
    // The card's number: microseconds a round in the first 20 rounds (the first three stretches)
    // and in the rest, on the same page against separate pages.
    const int first = first_rounds[3];
    const auto first_us = [&](const Case& c) {
        const double ms = times.median_host_ms(c.rounds[0]) + times.median_host_ms(c.rounds[1]) +
                          times.median_host_ms(c.rounds[2]);
        return ms * 1e3 / first;
    };
    const double same_us = first_us(cases[2]);
    const double separate_us = first_us(cases[1]);
    std::printf(
        "%.1fx in the first %d rounds: %.1f us a round on the same page against %.1f us on "
        "separate pages; later rounds on the same page cost %.1f us\n",
        same_us / separate_us, first, same_us, separate_us,
        times.median_host_ms(cases[2].rounds[3]) * 1e3 / (rounds - first));
    std::printf("%d rounds each: GPU only %s, separate pages %s, same page %s\n", rounds,
                found.right[0] ? "right" : "WRONG", found.right[1] ? "right" : "WRONG",
                found.right[2] ? "right" : "WRONG");
    return found.right[0] && found.right[1] && found.right[2] ? 0 : 1;
}
#endif
