// The course's check of exercise ex02_pin (the task is in ../pin.cu): after the learner's pin()
// an ordinary buffer must be pinned memory that uploads faster, and after unpin() ordinary again.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

// Written by the learner (exercises/pin.cu).
void pin(void* host, std::size_t bytes);
void unpin(void* host);

namespace {

using tutorial::Context;
using tutorial::Result;

bool is_pinned(const void* pointer) {
    return tutorial::memory_type(pointer) == cudaMemoryTypeHost;
}

Result check(Context& ctx) {
    constexpr std::size_t count = std::size_t{16} << 20;  // 64 MiB
    constexpr std::size_t bytes = count * sizeof(std::uint32_t);
    std::vector<std::uint32_t> host(count);
    fill_on_host(host.data(), count, 3);
    std::uint32_t* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    const auto upload = [&] {
        CUDA_CHECK(cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice));
    };
    const double pageable_ms = tutorial::median_event_ms(1, 5, upload);
    pin(host.data(), bytes);
    const bool pinned = is_pinned(host.data());
    CUDA_CHECK(cudaMemset(device, 0, bytes));
    const double pinned_ms = tutorial::median_event_ms(1, 5, upload);
    const std::size_t wrong = mismatches_on_device(device, count, 3);
    unpin(host.data());
    const bool unpinned = !is_pinned(host.data());
    std::printf("64 MiB upload: %.3f ms before pin() (%.1f GB/s), %.3f ms after (%.1f GB/s)\n",
                pageable_ms, tutorial::gb_per_s(bytes, pageable_ms), pinned_ms,
                tutorial::gb_per_s(bytes, pinned_ms));
    CUDA_CHECK(cudaFree(device));

    ctx.claim(tutorial::documented(
        "after pin() CUDA knows the buffer as pinned host memory", pinned,
        pinned ? "cudaPointerGetAttributes says pinned" : "it is still pageable",
        "pin() did not page-lock it. First step: cudaHostRegister(host, bytes, "
        "cudaHostRegisterDefault)",
        "Runtime API reference: cudaPointerGetAttributes (cudaMemoryTypeHost for registered host "
        "memory); cudaHostRegister"));
    ctx.claim(tutorial::documented(
        "after unpin() it is ordinary memory again", unpinned,
        unpinned ? "no longer pinned" : "still pinned",
        "the registration outlives the uploads. First step: cudaHostUnregister(host)",
        "Runtime API reference: cudaHostUnregister (the range becomes pageable again); "
        "cudaPointerGetAttributes"));
    ctx.claim(tutorial::at_least("the pinned buffer uploads faster (before / after)",
                                 pageable_ms / pinned_ms, 1.5, "x",
                                 "the copies still go through the driver's staging buffer. "
                                 "First step: page-lock the buffer with cudaHostRegister"));
    ctx.claim(tutorial::documented(
        "the uploads after pin() deliver the data", wrong == 0,
        std::to_string(wrong) + " of " + std::to_string(count) + " values wrong",
        "the register call changed the data. First step: register the buffer as it is, with its "
        "own address and size",
        "Runtime API reference: cudaHostRegister (pins the range where it is); cudaMemcpy"));
    return ctx.verdict(pinned && unpinned && wrong == 0,
                       tutorial::format("uploads %.2fx faster after pin(); pinned %s, then %s",
                                        pageable_ms / pinned_ms, pinned ? "yes" : "no",
                                        unpinned ? "unpinned" : "still pinned"));
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex02_pin",
        "Exercise (chapter 02_pinned): page-lock a buffer you already have",
        {{"check", "pin and unpin: pinned, faster uploads, unpinned", {}, true, check}}};
    return tutorial::run_chapter(program, argc, argv);
}
