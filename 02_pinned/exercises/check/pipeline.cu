// The course's check of exercise ex02_pipeline (the task is in ../pipeline.cu): the learner's
// process_pipelined() must give the kernel's result for every value, and sooner than the serial
// version beside it.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

// Written by the learner (exercises/pipeline.cu).
void process_serial(const std::uint32_t* host_in, std::uint32_t* host_out, std::uint32_t* device_in,
                    std::uint32_t* device_out, std::size_t count);
void process_pipelined(const std::uint32_t* host_in, std::uint32_t* host_out,
                       std::uint32_t* device_in, std::uint32_t* device_out, std::size_t count);

namespace {

using tutorial::Context;
using tutorial::Result;

// What scramble computes, worked out again here, and a kernel of the check's own that compares
// every output with it (reading the pinned host buffers directly: the CPU would take seconds).
__device__ std::uint32_t expected(std::uint32_t x) {
    for (int r = 0; r < 256; ++r) {
        x = x * 1664525u + 1013904223u;
        x ^= x >> 13;
    }
    return x;
}

__global__ void count_wrong(const std::uint32_t* in, const std::uint32_t* out, std::size_t count,
                            unsigned long long* wrong) {
    unsigned long long mine = 0;
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        mine += out[i] != expected(in[i]) ? 1 : 0;
    }
    if (mine > 0) atomicAdd(wrong, mine);
}

std::size_t mismatches(const std::uint32_t* in, const std::uint32_t* out, std::size_t count) {
    unsigned long long* wrong = nullptr;
    CUDA_CHECK(cudaMallocManaged(&wrong, sizeof(*wrong), cudaMemAttachGlobal));
    *wrong = 0;
    count_wrong<<<1024, 256>>>(in, out, count, wrong);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::size_t result = *wrong;
    CUDA_CHECK(cudaFree(wrong));
    return result;
}

double time_once(void (*process)(const std::uint32_t*, std::uint32_t*, std::uint32_t*,
                                 std::uint32_t*, std::size_t),
                 const std::uint32_t* host_in, std::uint32_t* host_out, std::uint32_t* device_in,
                 std::uint32_t* device_out, std::size_t count) {
    tutorial::HostTimer timer;
    process(host_in, host_out, device_in, device_out, count);
    CUDA_CHECK(cudaDeviceSynchronize());
    return timer.elapsed_ms();
}

// The buffers the learner's functions work on.
struct Buffers {
    std::uint32_t *host_in, *host_out, *device_in, *device_out;
    std::size_t count;
};

// Serial and pipelined taking turns, so that anything slowing the GPU down for a while slows
// both: a warm-up round, then the median of 7 (ms). Every pipelined run's output is checked.
struct Times {
    double serial_ms, pipelined_ms;
};

Times time_both(const Buffers& b, std::size_t& wrong) {
    std::vector<double> serial, pipelined;
    const std::size_t bytes = b.count * sizeof(std::uint32_t);
    for (int round = 0; round < 8; ++round) {
        const double s_ms =
            time_once(process_serial, b.host_in, b.host_out, b.device_in, b.device_out, b.count);
        std::memset(b.host_out, 0, bytes);  // what the next run writes is its own
        const double p_ms =
            time_once(process_pipelined, b.host_in, b.host_out, b.device_in, b.device_out, b.count);
        wrong += mismatches(b.host_in, b.host_out, b.count);
        if (round > 0) {
            serial.push_back(s_ms);
            pipelined.push_back(p_ms);
        }
    }
    return {tutorial::median(serial), tutorial::median(pipelined)};
}

Result check(Context& ctx) {
    constexpr std::size_t count = std::size_t{16} << 20;  // 64 MiB of 4-byte values
    const std::size_t bytes = count * sizeof(std::uint32_t);
    Buffers b{nullptr, nullptr, nullptr, nullptr, count};
    CUDA_CHECK(cudaMallocHost(&b.host_in, bytes));
    CUDA_CHECK(cudaMallocHost(&b.host_out, bytes));
    CUDA_CHECK(cudaMalloc(&b.device_in, bytes));
    CUDA_CHECK(cudaMalloc(&b.device_out, bytes));
    for (std::size_t i = 0; i < count; ++i)
        b.host_in[i] = static_cast<std::uint32_t>(i * 2654435761u);

    std::size_t wrong = 0;
    const Times t = time_both(b, wrong);
    std::printf("process_serial     %8.3f ms\nprocess_pipelined  %8.3f ms\n", t.serial_ms,
                t.pipelined_ms);

    ctx.claim(tutorial::documented(
        "results_right", "every output value is scramble's result for its input", wrong == 0,
        std::to_string(wrong) + " of " + std::to_string(8 * count) + " values wrong",
        "a chunk was left out, copied to the wrong place, or read before its stream finished. "
        "First step: check each chunk's offset and length, and synchronize every stream",
        tutorial::Entry{"Runtime API reference: cudaMemcpyAsync",
                        "src dst cudaMemcpyHostToDevice cudaMemcpyDeviceToHost", "copies"}));
    const int engines = tutorial::device_attribute(ctx.device, cudaDevAttrAsyncEngineCount);
    ctx.claim(tutorial::at_least(
                  "pipelined_sooner", "process_pipelined finishes sooner than process_serial",
                  t.serial_ms / t.pipelined_ms, 1.3, "x",
                  "the copies and the kernel still take turns. First step: cut the data into "
                  "chunks and queue each chunk's copy up, kernel and copy down on its own stream")
                  .again([&] {
                      const Times again = time_both(b, wrong);
                      return again.serial_ms / again.pipelined_ms;
                  }),
              engines >= 2 ? "" : "this GPU has fewer than 2 copy engines (asyncEngineCount)");

    CUDA_CHECK(cudaFree(b.device_out));
    CUDA_CHECK(cudaFree(b.device_in));
    CUDA_CHECK(cudaFreeHost(b.host_out));
    CUDA_CHECK(cudaFreeHost(b.host_in));
    return ctx.verdict(wrong == 0, std::string(wrong == 0 ? "results right, " : "results wrong, ") +
                                       tutorial::format("%.2fx", t.serial_ms / t.pipelined_ms) +
                                       " faster than serial");
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex02_pipeline",
        "Exercise (chapter 02_pinned): overlap the upload, the kernel and the download",
        {{"check", "process_pipelined: right results, sooner than serial", {}, true, check}},
        {},
        "02_pinned/exercises/pipeline.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
