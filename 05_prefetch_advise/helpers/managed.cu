#include "managed.hpp"

#include "common/check.hpp"
#include "common/device.hpp"
#include "common/patterns.hpp"
#include "common/text.hpp"
#include "common/timing.hpp"

#include <cstdint>

const char* why_no_gpu_prefetch(int device) {
    return tutorial::device_attribute(device, cudaDevAttrConcurrentManagedAccess) == 1
               ? ""
               : "concurrentManagedAccess = 0: cudaMemPrefetchAsync to a GPU is refused on this "
                 "device (Windows, WSL, Jetson)";
}

std::string why_no_batch_calls() {
    const int devices = tutorial::device_count();
    for (int d = 0; d < devices; ++d) {
        if (tutorial::device_attribute(d, cudaDevAttrConcurrentManagedAccess) != 1) {
            return tutorial::format(
                "GPU %d has concurrentManagedAccess = 0, and the batch calls require it of every "
                "device in the system (Runtime API reference: cudaMemPrefetchBatchAsync)",
                d);
        }
    }
    return "";
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
