// Section portable_pinned (2 or more GPUs): cudaHostAllocPortable asks that pinned memory count
// as pinned for every CUDA context. Under unified addressing every pinned allocation already is:
// does the flag still change anything? Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 01_uva/portable_pinned.cu common/standalone.cu -o build/portable_pinned
//   (or in 01_uva/: nvcc -std=c++17 -I.. portable_pinned.cu ../common/standalone.cu
//       -o ../build/portable_pinned)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"
#include "common/timing.hpp"

#include <cstdint>
#include <vector>

namespace {

constexpr std::uint32_t seed = 31;
constexpr const char* buffer_names[2] = {"Portable", "Default"};

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
// copies[gpu][which]: GPU `gpu` copies from buffer `which` (0: Portable, 1: Default), for up to
// `most_gpus` GPUs.
constexpr int most_gpus = 8;
constexpr tutorial::Step copies[most_gpus][2] = {
    {{"GPU 0 copies from the Portable buffer"}, {"GPU 0 copies from the Default buffer"}},
    {{"GPU 1 copies from the Portable buffer"}, {"GPU 1 copies from the Default buffer"}},
    {{"GPU 2 copies from the Portable buffer"}, {"GPU 2 copies from the Default buffer"}},
    {{"GPU 3 copies from the Portable buffer"}, {"GPU 3 copies from the Default buffer"}},
    {{"GPU 4 copies from the Portable buffer"}, {"GPU 4 copies from the Default buffer"}},
    {{"GPU 5 copies from the Portable buffer"}, {"GPU 5 copies from the Default buffer"}},
    {{"GPU 6 copies from the Portable buffer"}, {"GPU 6 copies from the Default buffer"}},
    {{"GPU 7 copies from the Portable buffer"}, {"GPU 7 copies from the Default buffer"}},
};

// A kernel on `gpu` reads the buffer in place, then another writes it, which the CPU checks. The
// kernels use the host pointer as it is.
struct InPlace {
    std::size_t read_wrong;     // a kernel on this GPU read the buffer through its pointer
    std::size_t written_wrong;  // a kernel on this GPU wrote it; the CPU checked
};

InPlace use_in_place(int gpu, std::uint32_t* device, std::uint32_t* host, std::size_t count) {
    InPlace r{0, 0};
    CUDA_CHECK(cudaSetDevice(gpu));
    fill_on_host(host, count, seed);
    CUDA_CHECK(cudaMemcpy(device, host, count * sizeof *host, cudaMemcpyHostToDevice));
    r.read_wrong =
        mismatches_on_device(device, count, seed) + mismatches_on_device(host, count, seed);
    fill_on_device(host, count, seed + gpu + 1);  // the kernel writes through the host pointer
    r.written_wrong = mismatches_on_host(host, count, seed + gpu + 1);
    return r;
}

// What the walkthrough found.
struct Found {
    unsigned flags[2] = {0, 0};      // cudaHostGetFlags of the Portable and the Default buffer
    unsigned default_elsewhere = 0;  // the Default buffer's, with another GPU current
    std::vector<InPlace> in_place;   // GPU 0 Portable, GPU 0 Default, GPU 1 Portable, ...
};

// GPU `home` and GPUs 0 .. gpus - 1 (at most `most_gpus`), `count` values a buffer.
Found walkthrough(int home, int gpus, std::size_t count, int rounds) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    Found found;
    // 1. Two pinned buffers made while GPU `home` is current: one asks to count as pinned for
    //    every CUDA context, the other does not.
    std::uint32_t* host[2] = {nullptr, nullptr};
    CUDA_CHECK(cudaSetDevice(home));
    CUDA_CHECK(cudaHostAlloc(&host[0], bytes, cudaHostAllocPortable));
    CUDA_CHECK(cudaHostAlloc(&host[1], bytes, cudaHostAllocDefault));

    // 2. The flags each buffer reports it was allocated with (cudaHostAlloc's flag values); the
    //    Default buffer's also with another GPU current.
    CUDA_CHECK(cudaHostGetFlags(&found.flags[0], host[0]));
    CUDA_CHECK(cudaHostGetFlags(&found.flags[1], host[1]));
    CUDA_CHECK(cudaSetDevice((home + 1) % gpus));
    CUDA_CHECK(cudaHostGetFlags(&found.default_elsewhere, host[1]));

    // 3. Every GPU copies from each buffer into its own memory, four copies back to back; the
    //    GPU-buffer pairs take turns, round after round.
    std::vector<std::uint32_t*> device(gpus, nullptr);
    for (int g = 0; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMalloc(&device[g], bytes));
    }
    for (int round = 0; round < rounds; ++round) {
        for (int g = 0; g < gpus; ++g) {
            for (int which = 0; which < 2; ++which) {
                CUDA_CHECK(cudaSetDevice(g));
                // The step ends on this GPU's stream, before another GPU is current.
                const tutorial::During during(copies[g][which]);
                for (int c = 0; c < 4; ++c) {
                    CUDA_CHECK(cudaMemcpyAsync(device[g], host[which], bytes,
                                               cudaMemcpyHostToDevice, nullptr));
                }
            }
        }
    }

    // 4. A kernel on every GPU reads each buffer in place, another writes it; the CPU checks.
    for (int g = 0; g < gpus; ++g) {
        for (int which = 0; which < 2; ++which)
            found.in_place.push_back(use_in_place(g, device[g], host[which], count));
    }

    // 5. Device memory freed on its GPU; pinned memory with cudaFreeHost, GPU `home` current.
    for (int g = 0; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaFree(device[g]));
    }
    CUDA_CHECK(cudaSetDevice(home));
    CUDA_CHECK(cudaFreeHost(host[0]));
    CUDA_CHECK(cudaFreeHost(host[1]));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <algorithm>
#include <cstdio>

#include "common/device.hpp"

int main() {
    const int gpus = std::min(tutorial::device_count(), most_gpus);
    if (gpus < 2) {  // nothing to show: say so as the course does for a missing device (77)
        std::printf("SKIP: portable_pinned: a buffer for every GPU needs 2 GPUs; this machine has "
                    "%d\n",
                    gpus);
        return 77;
    }
    constexpr std::size_t bytes = std::size_t{256} << 20;
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(0, gpus, bytes / sizeof(std::uint32_t), 9);
    times.print();
    std::printf("cudaHostGetFlags: Portable buffer %#x, Default buffer %#x\n", found.flags[0],
                found.flags[1]);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < found.in_place.size(); ++i) {
        std::printf("GPU %zu, %s buffer: a kernel read %zu values wrong, wrote %zu wrong\n", i / 2,
                    buffer_names[i % 2], found.in_place[i].read_wrong,
                    found.in_place[i].written_wrong);
        wrong += found.in_place[i].read_wrong + found.in_place[i].written_wrong;
    }
    // The answer: Default's copy rate over Portable's on the same GPU, the lowest of the GPUs.
    double lowest = 1e300;
    for (int g = 0; g < gpus; ++g)
        lowest = std::min(lowest, times.median_ms(copies[g][0]) / times.median_ms(copies[g][1]));
    std::printf("256 MiB: every GPU copied from the Default buffer at %.3fx the Portable one's "
                "rate, the lowest of %d GPUs (GPU 0: %.1f against %.1f GB/s)\n",
                lowest, gpus, tutorial::gb_per_s(4 * bytes, times.median_ms(copies[0][1])),
                tutorial::gb_per_s(4 * bytes, times.median_ms(copies[0][0])));
    return wrong == 0 ? 0 : 1;
}
#endif
