// What the checks of chapter 07 share: handles written as text lines, the kernel and sums that
// workers' results are checked with, and how many worker processes fit on the device.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

// A worker gives up on a master that is alive but sends nothing for this long (its stdin has a
// deadline, common/harness/child.hpp's read_input_line); one whose master died sees end-of-file at
// once.
constexpr double task_timeout_s = 30.0;

// IPC handles are opaque bytes; on the channel they travel as hexadecimal text.
std::string to_hex(const void* data, std::size_t bytes);
bool from_hex(const std::string& text, void* data, std::size_t bytes);

// "<handle in hex> <number>": the line that bench and cross_gpu send each worker (the number is a
// count or a size). read_handle_line reads it from the child's stdin, with the task deadline.
std::string handle_line(const cudaIpcMemHandle_t& handle, std::size_t number);
bool read_handle_line(cudaIpcMemHandle_t& handle, std::size_t& number);

// result[i] = 2 * input[i] + 1 over `count` elements (queued on `stream`). Check the result with
// mismatches_on_device(result, count, seed, {2, 1}) from common/patterns.hpp.
void transform(const std::uint32_t* input, std::uint32_t* result, std::size_t count,
               cudaStream_t stream);
// The sum of pattern(i, seed) for i in [offset, offset + count), from the formula.
std::uint64_t slice_sum(std::size_t offset, std::size_t count, std::uint32_t seed);
// The read bandwidth of common's sum kernel alone: events around the kernel, 1 warm-up, median of
// `runs`.
double read_gbps(const std::uint32_t* data, std::size_t count, int runs);

// Why legacy IPC (cudaIpcGetMemHandle, interprocess events) cannot work on `device`, or "": the
// cudaIpcGetMemHandle entry names ipcEventSupported as the test for IPC.
std::string why_no_legacy_ipc(int device);

// How many worker processes fit in the memory that is free now. Each worker holds a CUDA context
// of its own (524 MiB on an H100 with driver 580, counted here as 768 MiB) and `device_each` bytes
// of device memory and `host_each` bytes of host memory; the master holds `device_fixed` and
// `host_fixed` bytes besides, which it has not allocated yet when it asks.
struct WorkerMemory {
    std::size_t device_each = 0;
    std::size_t host_each = 0;
    std::size_t device_fixed = 0;
    std::size_t host_fixed = 0;
};
// `wanted`, or as many as fit where that is fewer (0 when none does).
int workers_fitting(int wanted, const WorkerMemory& need);
// What a section says when only `fitting` of the `wanted` workers fit: one line naming what they
// need and what is free ("" when all fit).
std::string workers_note(int wanted, int fitting, const WorkerMemory& need);
