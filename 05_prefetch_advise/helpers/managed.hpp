// Helpers shared by this chapter's sections: CUDA 13 memory locations, and timed kernels that
// read or write a whole managed buffer. The prefetch and advice calls themselves are written out
// in each section.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

// CUDA 13 names a place in memory with a cudaMemLocation; before 13.0 the same calls took an int
// device ordinal, with cudaCpuDeviceId (-1) for the host.
inline cudaMemLocation gpu_location(int device) {
    return {cudaMemLocationTypeDevice, device};
}
inline cudaMemLocation host_location() {
    return {cudaMemLocationTypeHost, 0};
}

// Why this chapter's sections cannot run on `device`, or "" when they can: a prefetch to a GPU
// (and advice that moves pages to one) needs concurrentManagedAccess = 1.
const char* why_no_gpu_prefetch(int device);

// Why the CUDA 13 batch calls (cudaMemPrefetchBatchAsync, cudaMemDiscardBatchAsync,
// cudaMemDiscardAndPrefetchBatchAsync) cannot be used here, or "" when they can: their Runtime API
// reference entries require concurrentManagedAccess = 1 of every device in the system, not only
// of the one the stream belongs to, and return an error otherwise. A program sees only the
// devices CUDA_VISIBLE_DEVICES leaves it, so those are the ones checked.
std::string why_no_batch_calls();

struct DeviceSum {
    double ms;          // the kernel alone, from events
    std::uint64_t sum;  // what it added up
};

// A kernel reads every element of `data` and adds them up (events around the kernel only).
DeviceSum timed_device_sum(const std::uint32_t* data, std::size_t count);
// A kernel writes pattern(i, seed) into every element; returns its milliseconds (events).
double timed_device_fill(std::uint32_t* data, std::size_t count, std::uint32_t seed);
