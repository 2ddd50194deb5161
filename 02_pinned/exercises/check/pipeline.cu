// The course's check of exercise ex02_pipeline (the task is in ../pipeline.cu): the learner's
// process_pipelined() must give the kernel's result for every value, and sooner than the serial
// version beside it.
#include "common/chapter.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/report.hpp"
#include "common/timing.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>

// Written by the learner (exercises/pipeline.cu).
void process_serial(const std::uint32_t* host_in, std::uint32_t* host_out, std::uint32_t* device_in,
                    std::uint32_t* device_out, std::size_t count);
void process_pipelined(const std::uint32_t* host_in, std::uint32_t* host_out,
                       std::uint32_t* device_in, std::uint32_t* device_out, std::size_t count);

namespace {

using tutorial::Context;
using tutorial::Result;

// What scramble computes, worked out on the CPU: 16 steps of x -> a*x + c (mod 2^32) are one
// step x -> A*x + C, with A and C found once.
struct Affine {
    std::uint32_t a = 1, c = 0;
};
Affine scramble_steps() {
    Affine f;
    for (int r = 0; r < 16; ++r) {
        f.a *= 1664525u;
        f.c = f.c * 1664525u + 1013904223u;
    }
    return f;
}

template <typename Process>
double time_ms(Process process) {
    return tutorial::median_ms(1, 5, [&] {
        tutorial::HostTimer timer;
        process();
        CUDA_CHECK(cudaDeviceSynchronize());
        return timer.elapsed_ms();
    });
}

Result check(Context& ctx) {
    constexpr std::size_t count = std::size_t{16} << 20;  // 64 MiB of 4-byte values
    const std::size_t bytes = count * sizeof(std::uint32_t);
    std::uint32_t* host_in = nullptr;
    std::uint32_t* host_out = nullptr;
    std::uint32_t* device_in = nullptr;
    std::uint32_t* device_out = nullptr;
    CUDA_CHECK(cudaMallocHost(&host_in, bytes));
    CUDA_CHECK(cudaMallocHost(&host_out, bytes));
    CUDA_CHECK(cudaMalloc(&device_in, bytes));
    CUDA_CHECK(cudaMalloc(&device_out, bytes));
    for (std::size_t i = 0; i < count; ++i)
        host_in[i] = static_cast<std::uint32_t>(i * 2654435761u);

    const double serial_ms =
        time_ms([&] { process_serial(host_in, host_out, device_in, device_out, count); });
    for (std::size_t i = 0; i < count; ++i) host_out[i] = 0;
    const double pipelined_ms =
        time_ms([&] { process_pipelined(host_in, host_out, device_in, device_out, count); });
    std::size_t wrong = 0;
    const Affine f = scramble_steps();
    for (std::size_t i = 0; i < count; ++i) wrong += host_out[i] != f.a * host_in[i] + f.c;
    std::printf("process_serial     %8.3f ms\nprocess_pipelined  %8.3f ms\n", serial_ms,
                pipelined_ms);

    ctx.claim(tutorial::observed(
        "every output value is scramble's result for its input", wrong == 0,
        std::to_string(wrong) + " of " + std::to_string(count) + " values wrong",
        "a chunk was left out, copied to the wrong place, or read before its stream finished. "
        "First step: check each chunk's offset and length, and synchronize every stream"));
    const int engines = tutorial::device_attribute(ctx.device, cudaDevAttrAsyncEngineCount);
    ctx.claim(tutorial::at_least(
                  "process_pipelined finishes sooner than process_serial", serial_ms / pipelined_ms,
                  1.3, "x",
                  "the copies and the kernel still take turns. First step: cut the data into "
                  "chunks and queue each chunk's copy up, kernel and copy down on its own stream"),
              engines >= 2 ? "" : "this GPU has fewer than 2 copy engines (asyncEngineCount)");

    CUDA_CHECK(cudaFree(device_out));
    CUDA_CHECK(cudaFree(device_in));
    CUDA_CHECK(cudaFreeHost(host_out));
    CUDA_CHECK(cudaFreeHost(host_in));
    return ctx.verdict(wrong == 0, "results right, " +
                                       tutorial::format("%.2fx", serial_ms / pipelined_ms) +
                                       " faster than serial");
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex02_pipeline",
        "Exercise (chapter 02_pinned): overlap the upload, the kernel and the download",
        {{"check", "process_pipelined: right results, sooner than serial", check}}};
    return tutorial::run_chapter(program, argc, argv);
}
