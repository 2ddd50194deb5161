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

// What the check saw: the upload before and after pin(), and what CUDA called the buffer.
struct Uploads {
    double pageable_ms, pinned_ms;
    bool pinned, unpinned;
    std::size_t wrong;
};

// One measurement, fresh: uploads before pin(), then pin(), uploads after, then unpin().
Uploads measure(std::vector<std::uint32_t>& host, std::uint32_t* device) {
    const std::size_t count = host.size();
    const std::size_t bytes = count * sizeof(std::uint32_t);
    const auto upload = [&] {
        CUDA_CHECK(cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice));
    };
    Uploads u{};
    u.pageable_ms = tutorial::median_event_ms(1, 5, upload);
    pin(host.data(), bytes);
    u.pinned = is_pinned(host.data());
    CUDA_CHECK(cudaMemset(device, 0, bytes));
    u.pinned_ms = tutorial::median_event_ms(1, 5, upload);
    u.wrong = mismatches_on_device(device, count, 3);
    unpin(host.data());
    u.unpinned = !is_pinned(host.data());
    return u;
}

Result check(Context& ctx) {
    constexpr std::size_t count = std::size_t{16} << 20;  // 64 MiB
    constexpr std::size_t bytes = count * sizeof(std::uint32_t);
    std::vector<std::uint32_t> host(count);
    fill_on_host(host.data(), count, 3);
    std::uint32_t* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    const Uploads u = measure(host, device);
    std::printf("64 MiB upload: %.3f ms before pin() (%.1f GB/s), %.3f ms after (%.1f GB/s)\n",
                u.pageable_ms, tutorial::gb_per_s(bytes, u.pageable_ms), u.pinned_ms,
                tutorial::gb_per_s(bytes, u.pinned_ms));

    const tutorial::Entry pointer_types{"Runtime API reference: cudaPointerGetAttributes",
                                        "cudaMemoryTypeUnregistered cudaMemoryTypeHost", "can"};
    ctx.claim(tutorial::documented(
        "pinned_after_pin", "after pin() CUDA knows the buffer as pinned host memory", u.pinned,
        u.pinned ? "cudaPointerGetAttributes says pinned" : "it is still pageable",
        "pin() did not page-lock it. First step: cudaHostRegister(host, bytes, "
        "cudaHostRegisterDefault)",
        pointer_types));
    ctx.claim(tutorial::documented(
        "unpinned_after_unpin", "after unpin() it is ordinary memory again", u.unpinned,
        u.unpinned ? "no longer pinned" : "still pinned",
        "the registration outlives the uploads. First step: cudaHostUnregister(host)",
        pointer_types));
    ctx.claim(tutorial::at_least("pinned_uploads_faster",
                                 "the pinned buffer uploads faster (before / after)",
                                 u.pageable_ms / u.pinned_ms, 1.5, "x",
                                 "the copies still go through the driver's staging buffer. "
                                 "First step: page-lock the buffer with cudaHostRegister")
                  .again([&] {
                      // pin() again on memory unpin() left pinned would be refused: keep it.
                      if (!u.unpinned) return u.pageable_ms / u.pinned_ms;
                      const Uploads again = measure(host, device);
                      return again.pageable_ms / again.pinned_ms;
                  }));
    ctx.claim(tutorial::documented(
        "uploads_arrive", "the uploads after pin() deliver the data", u.wrong == 0,
        std::to_string(u.wrong) + " of " + std::to_string(count) + " values wrong",
        "the register call changed the data. First step: register the buffer as it is, with its "
        "own address and size",
        tutorial::Entry{"Runtime API reference: cudaMemcpy",
                        "src dst cudaMemcpyHostToDevice cudaMemcpyDeviceToHost", "copies"}));
    CUDA_CHECK(cudaFree(device));
    return ctx.verdict(u.pinned && u.unpinned && u.wrong == 0,
                       tutorial::format("uploads %.2fx faster after pin(); pinned %s, then %s",
                                        u.pageable_ms / u.pinned_ms, u.pinned ? "yes" : "no",
                                        u.unpinned ? "unpinned" : "still pinned"));
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex02_pin",
        "Exercise (chapter 02_pinned): page-lock a buffer you already have",
        {{"check", "pin and unpin: pinned, faster uploads, unpinned", {}, true, check}},
        {},
        "02_pinned/exercises/pin.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
