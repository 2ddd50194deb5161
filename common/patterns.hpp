// Known data for checking copies and kernels: element i of a buffer filled with `seed` holds
// pattern(i, seed). Filling and checking happen on the side that owns the memory (CPU loops for
// host memory, kernels for device memory), so a check never relies on the copy it is checking.
#pragma once

#include "common/buffer.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

__host__ __device__ inline std::uint32_t pattern(std::size_t i, std::uint32_t seed) {
    return static_cast<std::uint32_t>(i) * 2654435761u ^ seed;  // distinct values, cheap to compute
}

void fill_on_host(std::uint32_t* data, std::size_t count, std::uint32_t seed);
std::size_t mismatches_on_host(const std::uint32_t* data, std::size_t count, std::uint32_t seed);

// What a kernel did to every element of a pattern: x -> scale * x + add (mod 2^32).
struct Applied {
    std::uint32_t scale = 1;
    std::uint32_t add = 0;
};

// Kernels on the current device. fill_on_device_async only queues the kernel on `stream`; the
// other two synchronize before returning. mismatches_on_device counts the elements that are not
// applied(pattern(first + i, seed)): the pattern itself by default; {2, 1} after x -> 2x + 1;
// `first` for a slice that starts at element `first` of the patterned buffer.
void fill_on_device_async(std::uint32_t* data, std::size_t count, std::uint32_t seed,
                          cudaStream_t stream);
void fill_on_device(std::uint32_t* data, std::size_t count, std::uint32_t seed);
std::size_t mismatches_on_device(const std::uint32_t* data, std::size_t count, std::uint32_t seed,
                                 Applied applied = {}, std::size_t first = 0);

// The first `count` values of a Buffer, filled or checked by whichever side owns its memory: a
// kernel for device memory, the CPU for every other kind.
void fill(const tutorial::Buffer& buffer, std::size_t count, std::uint32_t seed);
std::size_t mismatches(const tutorial::Buffer& buffer, std::size_t count, std::uint32_t seed);

// Sums, for checks that read every element: from the pattern's formula alone (no memory read),
// by the CPU, and by a kernel (queued on `stream`; it adds into *sum, which must be zero and
// device-accessible; `count` must be a multiple of 4, since it reads 16 bytes at a time).
// Beware: for a count that is a multiple of a power of two larger than the seed, the sum does not
// depend on the seed (the XOR only permutes low bits), so a sum cannot tell one seed's data from
// another's; compare elements for that.
std::uint64_t pattern_sum(std::size_t count, std::uint32_t seed);
std::uint64_t sum_on_host(const std::uint32_t* data, std::size_t count);
void sum_on_device_async(const std::uint32_t* data, std::size_t count, unsigned long long* sum,
                         cudaStream_t stream);
// The same kernel, start to finish: returns the sum (synchronizes).
std::uint64_t sum_on_device(const std::uint32_t* data, std::size_t count);
