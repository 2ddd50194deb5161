// The course's check of exercise ex05_predict (the task is in ../predict.cu): the learner's
// predictions of what four steps move host to device, and whether the GPU faults, against what
// the driver's Unified Memory counters report for them.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/claim.hpp"
#include "common/harness/report.hpp"
#include "common/harness/um_counters.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

// Written by the learner (exercises/predict.cu).
extern const double predicted_mib_host_to_device[4];
extern const int predicted_gpu_faults[4];

namespace {

using tutorial::Context;
using tutorial::Result;
using tutorial::UmTraffic;

constexpr std::size_t count = std::size_t{16} << 20;  // 64 MiB of std::uint32_t
constexpr double margin_mib = 8.0;

__global__ void sum_all(const std::uint32_t* data, std::size_t n, unsigned long long* sum) {
    unsigned long long partial = 0;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
         i += std::size_t{gridDim.x} * blockDim.x) {
        partial += data[i];
    }
    atomicAdd(sum, partial);
}

struct Step {
    const char* what;
    const char* if_wrong;  // why a wrong prediction is wrong, and a first step
};

const Step steps[4] = {
    {"the CPU writes every value",
     "the CPU touched the pages first, so they were made where the CPU is. First step: ask "
     "where the pages are after step 1, and whether the GPU took any part in it"},
    {"a kernel reads every value",
     "the pages were in host memory and the kernel needs them all on the GPU, with nothing "
     "moved ahead of it. First step: ask how a page gets to the GPU when the kernel touches it"},
    {"the same kernel again",
     "step 2 left the pages somewhere. First step: ask where they are after step 2, and what the "
     "second kernel still has to fetch"},
    {"prefetch to the CPU, prefetch to the GPU, then the kernel",
     "the prefetches run before the kernel, in order. First step: ask where the pages are when "
     "the kernel starts, and which call moved them there"},
};

// Runs the four steps on `data` with the counters on; returns how many sums were wrong.
int run_steps(tutorial::UmCounters& counters, std::uint32_t* data, int device, UmTraffic* t) {
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    const std::uint64_t expected = std::uint64_t{count} * (count - 1) / 2;
    int wrong = 0;
    const auto kernel = [&] {
        CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
        sum_all<<<1024, 256>>>(data, count, sum);
        CUDA_CHECK(cudaGetLastError());
        unsigned long long value = 0;
        CUDA_CHECK(cudaMemcpy(&value, sum, sizeof value, cudaMemcpyDeviceToHost));
        wrong += value != expected;
    };
    const std::size_t bytes = count * sizeof *data;
    t[0] = counters.measure([&] {
        for (std::size_t i = 0; i < count; ++i) data[i] = static_cast<std::uint32_t>(i);
    });
    t[1] = counters.measure(kernel);
    t[2] = counters.measure(kernel);
    const cudaMemLocation host = {cudaMemLocationTypeHost, 0};
    const cudaMemLocation gpu = {cudaMemLocationTypeDevice, device};
    t[3] = counters.measure([&] {
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, host, 0, nullptr));
        CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, nullptr));
        kernel();
    });
    CUDA_CHECK(cudaFree(sum));
    return wrong;
}

std::string faults_word(int faults) {
    return faults == 0 ? "none" : faults == 1 ? "some" : std::to_string(faults) + " (not yet set)";
}

Result check(Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 0) {
        return ctx.skip("concurrentManagedAccess = 0: pages do not migrate one by one here");
    }
    tutorial::UmCounters counters;
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, count * sizeof *data, cudaMemAttachGlobal));
    UmTraffic t[4];
    const int wrong_sums = run_steps(counters, data, ctx.device, t);
    CUDA_CHECK(cudaFree(data));
    if (!counters.available()) {
        return ctx.skip(
            "the steps ran, but the Unified Memory counters cannot be read here, so "
            "the predictions are not judged: " +
            counters.why_not());
    }
    int right = 0;
    // One claim per step: the parts of the learner's prediction that the count contradicts.
    // Counters that saw nothing move in their positive control, or records lost in a step
    // (um_counters.hpp), would make a wrong prediction look right, or a right one wrong.
    std::printf("%s\n\n", counters.control_line().c_str());
    const auto judge = [&](int s, tutorial::Claim claim) {
        const std::string why = tutorial::why_not_counted(counters, {&t[s]});
        right += claim.measured == 0.0 || !why.empty();
        ctx.claim(claim, why);
    };
    const auto wrong_parts = [&](int s) {
        const double mib = static_cast<double>(t[s].htod.total) / (1024.0 * 1024.0);
        const int faults = t[s].gpu_page_faults > 0 ? 1 : 0;
        return double((std::fabs(predicted_mib_host_to_device[s] - mib) > margin_mib) +
                      (predicted_gpu_faults[s] != faults));
    };
    const auto faults = [&](int s) { return faults_word(predicted_gpu_faults[s]); };
    judge(0, tutorial::counted_at_most(
                 "step1_predicted",
                 tutorial::format("step 1, the CPU writes every value: your prediction (%g MiB "
                                  "host to device, GPU faults: %s) against the count (parts wrong)",
                                  predicted_mib_host_to_device[0], faults(0).c_str()),
                 wrong_parts(0), 0.0, "", steps[0].if_wrong));
    judge(1, tutorial::counted_at_most(
                 "step2_predicted",
                 tutorial::format("step 2, a kernel reads every value: your prediction (%g MiB "
                                  "host to device, GPU faults: %s) against the count (parts wrong)",
                                  predicted_mib_host_to_device[1], faults(1).c_str()),
                 wrong_parts(1), 0.0, "", steps[1].if_wrong));
    judge(2, tutorial::counted_at_most(
                 "step3_predicted",
                 tutorial::format("step 3, the same kernel again: your prediction (%g MiB host to "
                                  "device, GPU faults: %s) against the count (parts wrong)",
                                  predicted_mib_host_to_device[2], faults(2).c_str()),
                 wrong_parts(2), 0.0, "", steps[2].if_wrong));
    judge(3, tutorial::counted_at_most(
                 "step4_predicted",
                 tutorial::format("step 4, prefetch to the CPU, prefetch to the GPU, then the "
                                  "kernel: your prediction (%g MiB host to device, GPU faults: "
                                  "%s) against the count (parts wrong)",
                                  predicted_mib_host_to_device[3], faults(3).c_str()),
                 wrong_parts(3), 0.0, "", steps[3].if_wrong));
    if (right == 4) {
        std::printf("\nAll four right. What the counters reported:\n");
        tutorial::Table table(tutorial::um_columns("step"));
        for (int s = 0; s < 4; ++s) {
            table.add_row(
                tutorial::um_cells(tutorial::format("%d. %s", s + 1, steps[s].what), t[s]));
        }
        table.print();
        std::printf("\n");
    } else {
        std::printf("\nThe counts stay hidden until every prediction is right.\n");
    }
    return ctx.verdict(right == 4 && wrong_sums == 0,
                       tutorial::format("%d of 4 steps predicted right; %d of 3 kernel sums "
                                        "wrong",
                                        right, wrong_sums));
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex05_predict",
        "Exercise (chapter 05_prefetch_advise): predict what the driver moves",
        {{"check", "your predictions against the Unified Memory counters", {}, true, check}},
        {},
        "05_prefetch_advise/exercises/predict.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
