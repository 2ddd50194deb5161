#include "workers.hpp"

#include "common/check.hpp"
#include "common/patterns.hpp"
#include "ipc_common.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

namespace {

constexpr std::uint32_t batch_seed = 41;

}  // namespace

int child_slice_worker(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const bool crash = args.at(1) == "crash";
    std::string line;
    SliceTask task{};
    if (!std::getline(std::cin, line) || !decode(line, task)) {
        std::printf("the channel closed before a task arrived: exiting\n");
        return 4;
    }
    void* input = nullptr;
    void* result = nullptr;
    CUDA_CHECK(cudaIpcOpenMemHandle(&input, task.input, cudaIpcMemLazyEnablePeerAccess));
    CUDA_CHECK(cudaIpcOpenMemHandle(&result, task.result, cudaIpcMemLazyEnablePeerAccess));
    std::printf("input at %p, result at %p; slice %zu + %zu\n", input, result, task.offset,
                task.count);
    if (crash) {
        std::printf("crashing on purpose, in the middle of the task\n");
        std::fflush(stdout);
        std::raise(SIGSEGV);
    }
    const auto* in = static_cast<const std::uint32_t*>(input) + task.offset;
    auto* out = static_cast<std::uint32_t*>(result) + task.offset;
    const std::uint64_t checksum = sum_on_device(in, task.count);
    transform(in, out, task.count, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaIpcCloseMemHandle(input));
    CUDA_CHECK(cudaIpcCloseMemHandle(result));
    std::printf("checksum %llu\n", static_cast<unsigned long long>(checksum));
    return 0;
}

BatchOutcome run_batch(int device, std::size_t count, int workers, int crash_worker) {
    std::uint32_t* input = nullptr;
    std::uint32_t* result = nullptr;
    CUDA_CHECK(cudaMalloc(&input, count * sizeof *input));
    CUDA_CHECK(cudaMalloc(&result, count * sizeof *result));
    fill_on_device(input, count, batch_seed);
    CUDA_CHECK(cudaMemset(result, 0, count * sizeof *result));
    SliceTask task{};
    CUDA_CHECK(cudaIpcGetMemHandle(&task.input, input));
    CUDA_CHECK(cudaIpcGetMemHandle(&task.result, result));

    // Slices are whole multiples of 4 elements (the workers' sum kernel reads 16 bytes at once).
    const std::size_t per_worker = count / workers / 4 * 4;
    BatchOutcome batch{
        reinterpret_cast<std::uintptr_t>(input), reinterpret_cast<std::uintptr_t>(result), {}};
    std::vector<std::unique_ptr<tutorial::ChildProcess>> children;
    for (int w = 0; w < workers; ++w) {
        task.offset = w * per_worker;
        task.count = w + 1 == workers ? count - task.offset : per_worker;
        children.push_back(std::make_unique<tutorial::ChildProcess>(
            "slice_worker", std::vector<std::string>{std::to_string(device),
                                                     w == crash_worker ? "crash" : "work"}));
        children.back()->send(encode(task) + "\n");
        batch.workers.push_back({task.offset, task.count, {}, false, false, ""});
    }
    for (int w = 0; w < workers; ++w) {
        WorkerOutcome& outcome = batch.workers[w];
        outcome.child = children[w]->wait(60.0);  // no wait without a deadline
        const std::string& text = outcome.child.output;
        const std::size_t at = text.find("input at ");
        if (at != std::string::npos) outcome.mapped = text.substr(at, text.find(';', at) - at);
        const std::size_t sum_at = text.find("checksum ");
        const unsigned long long reported =
            sum_at == std::string::npos ? 0 : std::strtoull(text.c_str() + sum_at + 9, nullptr, 10);
        outcome.checksum_ok = sum_at != std::string::npos &&
                              reported == slice_sum(outcome.offset, outcome.count, batch_seed);
        outcome.results_ok = wrong_results(result, outcome.offset, outcome.count, batch_seed) == 0;
    }
    CUDA_CHECK(cudaFree(input));
    CUDA_CHECK(cudaFree(result));
    return batch;
}
