#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstdint>

namespace {

__global__ void fill_kernel(std::uint32_t* data, std::size_t count, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = pattern(i, seed);
    }
}

__global__ void mismatch_kernel(const std::uint32_t* data, std::size_t count, std::uint32_t seed,
                                Applied applied, std::size_t first,
                                unsigned long long* mismatches) {
    unsigned long long local = 0;
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        local += data[i] != applied.scale * pattern(first + i, seed) + applied.add;
    }
    if (local != 0) atomicAdd(mismatches, local);
}

// Adds up every 16-byte vector. Two things let it read at close to the memory's peak: each thread
// keeps four independent loads in flight before it uses any of them, and the threads of a block
// combine their partial sums first (warp shuffles, then shared memory), so that only one
// atomicAdd per block reaches the shared total instead of one per thread.
constexpr int sum_unroll = 4;

__global__ void sum_kernel(const uint4* data, std::size_t vectors, unsigned long long* sum) {
    unsigned long long local = 0;
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (sum_unroll - 1) * stride < vectors; i += sum_unroll * stride) {
        uint4 v[sum_unroll];
        for (int k = 0; k < sum_unroll; ++k) v[k] = data[i + k * stride];
        for (int k = 0; k < sum_unroll; ++k)
            local += static_cast<unsigned long long>(v[k].x) + v[k].y + v[k].z + v[k].w;
    }
    for (; i < vectors; i += stride) {
        const uint4 v = data[i];
        local += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
    }
    for (int offset = 16; offset > 0; offset /= 2) local += __shfl_down_sync(~0u, local, offset);
    __shared__ unsigned long long warp_sums[32];
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = local;
    __syncthreads();
    if (warp != 0) return;
    local = lane < static_cast<int>(blockDim.x / 32) ? warp_sums[lane] : 0;
    for (int offset = 16; offset > 0; offset /= 2) local += __shfl_down_sync(~0u, local, offset);
    if (lane == 0 && local != 0) atomicAdd(sum, local);
}

constexpr int threads_per_block = 256;
constexpr int blocks = 1024;

}  // namespace

void fill_on_host(std::uint32_t* data, std::size_t count, std::uint32_t seed) {
    for (std::size_t i = 0; i < count; ++i) data[i] = pattern(i, seed);
}

std::size_t mismatches_on_host(const std::uint32_t* data, std::size_t count, std::uint32_t seed) {
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) wrong += data[i] != pattern(i, seed);
    return wrong;
}

void fill_on_device_async(std::uint32_t* data, std::size_t count, std::uint32_t seed,
                          cudaStream_t stream) {
    fill_kernel<<<blocks, threads_per_block, 0, stream>>>(data, count, seed);
    CUDA_CHECK_LAUNCH();
}

void fill_on_device(std::uint32_t* data, std::size_t count, std::uint32_t seed) {
    fill_on_device_async(data, count, seed, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
}

std::size_t mismatches_on_device(const std::uint32_t* data, std::size_t count, std::uint32_t seed,
                                 Applied applied, std::size_t first) {
    unsigned long long* mismatches = nullptr;
    CUDA_CHECK(cudaMalloc(&mismatches, sizeof *mismatches));
    CUDA_CHECK(cudaMemset(mismatches, 0, sizeof *mismatches));
    mismatch_kernel<<<blocks, threads_per_block>>>(data, count, seed, applied, first, mismatches);
    CUDA_CHECK_LAUNCH();
    unsigned long long result = 0;
    CUDA_CHECK(cudaMemcpy(&result, mismatches, sizeof result, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(mismatches));
    return static_cast<std::size_t>(result);
}

void fill(const tutorial::Buffer& buffer, std::size_t count, std::uint32_t seed) {
    if (buffer.host_accessible())
        fill_on_host(buffer.as<std::uint32_t>(), count, seed);
    else
        fill_on_device(buffer.as<std::uint32_t>(), count, seed);
}

std::size_t mismatches(const tutorial::Buffer& buffer, std::size_t count, std::uint32_t seed) {
    return buffer.host_accessible() ? mismatches_on_host(buffer.as<std::uint32_t>(), count, seed)
                                    : mismatches_on_device(buffer.as<std::uint32_t>(), count, seed);
}

std::uint64_t pattern_sum(std::size_t count, std::uint32_t seed) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < count; ++i) sum += pattern(i, seed);
    return sum;
}

std::uint64_t sum_on_host(const std::uint32_t* data, std::size_t count) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < count; ++i) sum += data[i];
    return sum;
}

void sum_on_device_async(const std::uint32_t* data, std::size_t count, unsigned long long* sum,
                         cudaStream_t stream) {
    // As many blocks as the GPU holds at once (8 of 256 threads per SM), so every SM has as many
    // loads in flight as it can track.
    int device = 0;
    int sms = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    sum_kernel<<<sms * 8, threads_per_block, 0, stream>>>(reinterpret_cast<const uint4*>(data),
                                                          count / 4, sum);
    CUDA_CHECK_LAUNCH();
}

std::uint64_t sum_on_device(const std::uint32_t* data, std::size_t count) {
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    sum_on_device_async(data, count, sum, nullptr);
    unsigned long long value = 0;
    CUDA_CHECK(cudaMemcpy(&value, sum, sizeof value, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(sum));
    return value;
}
