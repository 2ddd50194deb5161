#include "managed.hpp"

#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

void prefetch(const void* data, std::size_t bytes, cudaMemLocation to, cudaStream_t stream) {
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, to, 0, stream));
}

void advise(const void* data, std::size_t bytes, cudaMemoryAdvise advice, cudaMemLocation where) {
    CUDA_CHECK(cudaMemAdvise(data, bytes, advice, where));
}

int range_attribute(const void* data, std::size_t bytes, cudaMemRangeAttribute attribute) {
    int value = 0;
    CUDA_CHECK(cudaMemRangeGetAttribute(&value, sizeof value, attribute, data, bytes));
    return value;
}

DeviceSum timed_device_sum(const std::uint32_t* data, std::size_t count) {
    unsigned long long* sum = nullptr;  // device memory: a managed counter would fault too
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    tutorial::EventTimer timer;
    timer.start();
    sum_on_device_async(data, count, sum, nullptr);
    timer.stop();
    DeviceSum result{timer.elapsed_ms(), 0};
    unsigned long long value = 0;
    CUDA_CHECK(cudaMemcpy(&value, sum, sizeof value, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(sum));
    result.sum = value;
    return result;
}

double timed_device_fill(std::uint32_t* data, std::size_t count, std::uint32_t seed) {
    tutorial::EventTimer timer;
    timer.start();
    fill_on_device_async(data, count, seed, nullptr);
    timer.stop();
    return timer.elapsed_ms();
}

double timed_prefetch(const void* data, std::size_t bytes, cudaMemLocation to) {
    tutorial::EventTimer timer;
    timer.start();
    prefetch(data, bytes, to, nullptr);
    timer.stop();
    return timer.elapsed_ms();
}
