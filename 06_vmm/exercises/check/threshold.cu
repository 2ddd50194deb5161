// The course's check of exercise ex06_threshold (the task is in ../threshold.cu): the job between
// the learner's prepare_pool() and finish_pool() must run faster than the same job on a pool with
// threshold 0 and keep its block from step to step; what the pool holds after finish_pool() is
// reported (cudaMemPoolTrimTo promises only to try, so a driver that keeps some fails nobody).
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/timing.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

// Written by the learner (exercises/threshold.cu).
void job_step(cudaMemPool_t pool, std::size_t bytes, int step, cudaStream_t stream);
void prepare_pool(cudaMemPool_t pool, std::size_t bytes);
void finish_pool(cudaMemPool_t pool);

namespace {

using tutorial::Context;
using tutorial::format;
using tutorial::format_bytes;
using tutorial::MiB;
using tutorial::Result;

constexpr int steps = 40;  // one job
constexpr int rounds = 4;  // round 0 warms up; the medians of the others

// The cudaMemPoolAttrReleaseThreshold entry: the threshold is the amount of reserved memory the
// pool holds onto before it tries to release any; cudaMemPoolTrimTo releases what no allocation
// holds.
const tutorial::Entry holds_below_threshold{
    "Runtime API reference: cudaMemPoolAttrReleaseThreshold",
    "cudaMemPoolAttrReleaseThreshold reserved", "hold onto"};

std::uint64_t held(cudaMemPool_t pool) {
    std::uint64_t bytes = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &bytes));
    return bytes;
}

// One job of `steps` steps, timed on the host; `most` gets the most the pool held after a step.
double run_job(cudaMemPool_t pool, std::size_t bytes, cudaStream_t stream, std::uint64_t& most) {
    tutorial::HostTimer timer;
    for (int step = 0; step < steps; ++step) {
        job_step(pool, bytes, step, stream);
        most = std::max(most, held(pool));
    }
    return timer.elapsed_ms();
}

struct Measured {
    double given_ms = 0;                   // median job time, threshold 0
    double yours_ms = 0;                   // ...between prepare_pool and finish_pool
    std::uint64_t given_most = 0;          // the most held after a step at threshold 0
    std::uint64_t after_job = UINT64_MAX;  // the least held after your job's last step
    std::uint64_t after_finish = 0;        // the most held after finish_pool
    double ratio() const { return yours_ms > 0 ? given_ms / yours_ms : 0.0; }
};

// Each round: the job at threshold 0 (the check sets it), then the learner's way.
Measured measure(cudaMemPool_t pool, std::size_t bytes, cudaStream_t stream) {
    Measured m;
    std::vector<double> given, yours;
    for (int round = 0; round < rounds; ++round) {
        std::uint64_t zero = 0;
        CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &zero));
        const double given_ms = run_job(pool, bytes, stream, m.given_most);
        CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));  // your job starts from an empty pool as well
        prepare_pool(pool, bytes);
        std::uint64_t yours_most = 0;
        const double yours_ms = run_job(pool, bytes, stream, yours_most);
        m.after_job = std::min(m.after_job, held(pool));
        finish_pool(pool);
        m.after_finish = std::max(m.after_finish, held(pool));
        if (round > 0) {
            given.push_back(given_ms);
            yours.push_back(yours_ms);
        }
    }
    m.given_ms = tutorial::median(given);
    m.yours_ms = tutorial::median(yours);
    return m;
}

Result report(Context& ctx, const Measured& m, std::size_t bytes,
              const std::function<double()>& again) {
    const std::string why_not_compared =
        m.given_most >= bytes
            ? "this driver kept the block at threshold 0 (" + format_bytes(m.given_most) +
                  " held after a step), so the job with threshold 0 is not slow here"
            : "";
    ctx.claim(tutorial::at_least("steps_faster",
                                 "your job runs several times faster than the job with threshold "
                                 "0 (its time / yours)",
                                 m.ratio(), 2.0, "x",
                                 "the pool still gives the block back at every synchronization. "
                                 "First step: in prepare_pool, cudaMemPoolSetAttribute(pool, "
                                 "cudaMemPoolAttrReleaseThreshold, &threshold) with a threshold "
                                 "of at least `bytes` (UINT64_MAX keeps everything)")
                  .again(again),
              why_not_compared);
    const bool kept = m.after_job >= bytes;
    ctx.claim(tutorial::documented(
        "kept_between_steps",
        "after your job's last step the pool still holds the block (held before finish_pool)", kept,
        format_bytes(m.after_job),
        "the pool's threshold is below what it holds, so it gave the memory back at the "
        "synchronization. First step: in prepare_pool, set cudaMemPoolAttrReleaseThreshold to at "
        "least `bytes`, or UINT64_MAX",
        holds_below_threshold));
    // cudaMemPoolTrimTo promises only to release what the allocator can safely release: what it
    // gave back is observed, and the verdict does not rest on it. Where the pool kept the block
    // the line says what finish_pool is for.
    const bool returned = m.after_finish < bytes;
    ctx.claim(tutorial::observed(
        "given_back_after", "after finish_pool the pool holds less than one block", returned,
        format_bytes(m.after_finish) +
            (returned ? "" : " (is finish_pool's cudaMemPoolTrimTo(pool, 0) there?)"),
        "the cudaMemPoolTrimTo entry releases memory until the pool holds minBytesToKeep or there "
        "is no more memory that the allocator can safely release; it does not say how much "
        "that is"));
    return ctx.verdict(kept, format("your job %.2fx as fast as with threshold 0; the pool held %s "
                                    "after its last step and %s after finish_pool",
                                    m.ratio(), format_bytes(m.after_job).c_str(),
                                    format_bytes(m.after_finish).c_str()));
}

Result check(Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported) != 1) {
        return ctx.skip("memoryPoolsSupported = 0: no stream-ordered pools on this device");
    }
    const std::size_t bytes = tutorial::fit_in_free_memory(64 * MiB, 0.25, 2 * MiB);
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = ctx.device;
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));  // a new pool: release threshold 0
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const Measured m = measure(pool, bytes, stream);
    std::printf(
        "A job of %d steps on %s blocks, %d rounds (the first a warm-up), medians:\n"
        "  threshold 0:                       %8.3f ms, the pool held up to %s after a step\n"
        "  prepare_pool ... finish_pool:      %8.3f ms, held %s after the last step, %s after "
        "finish_pool\n\n",
        steps, format_bytes(bytes).c_str(), rounds, m.given_ms, format_bytes(m.given_most).c_str(),
        m.yours_ms, format_bytes(m.after_job).c_str(), format_bytes(m.after_finish).c_str());
    const Result result =
        report(ctx, m, bytes, [&] { return measure(pool, bytes, stream).ratio(); });
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaMemPoolDestroy(pool));  // whatever it still holds goes back with it
    return result;
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex06_threshold",
        "Exercise (chapter 06_vmm): a pool's threshold for a job's steps, and a trim after it",
        {{"check",
          "prepare_pool, finish_pool: faster than threshold 0, kept, given back",
          {},
          true,
          check}},
        {},
        "06_vmm/exercises/threshold.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
