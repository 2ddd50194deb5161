// Section master_workers: the Programming Guide's interprocess communication scenario. A master
// puts a batch on the GPU once; worker processes get its IPC handles and use it in place.
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// The master's batch: two buffers in its device memory, and a handle for each.
struct Batch {
    std::uint32_t* input;
    std::uint32_t* result;
    cudaIpcMemHandle_t input_handle;
    cudaIpcMemHandle_t result_handle;
};

// Step 1. The master puts the batch on the GPU once and makes one handle per buffer, the same for
// every worker.
Batch put_batch_on_gpu(std::size_t count, std::uint32_t seed) {
    Batch batch{};
    CUDA_CHECK(cudaMalloc(&batch.input, count * sizeof *batch.input));
    CUDA_CHECK(cudaMalloc(&batch.result, count * sizeof *batch.result));
    fill_on_device(batch.input, count, seed);  // input[i] = pattern(i, seed)
    CUDA_CHECK(cudaMemset(batch.result, 0, count * sizeof *batch.result));
    CUDA_CHECK(cudaIpcGetMemHandle(&batch.input_handle, batch.input));
    CUDA_CHECK(cudaIpcGetMemHandle(&batch.result_handle, batch.result));
    return batch;
}

// Step 2. How the handles reach a worker. A handle is 64 opaque bytes (its `reserved` array), so
// any channel that carries bytes can carry it. Each worker gets one line of text on its standard
// input, a pipe from the master that started it (fork + exec): both handles in hexadecimal, then
// its slice as an offset and a count. Offsets travel, never pointers: the same memory has a
// different address in every process.
void append_hex(std::string& line, const cudaIpcMemHandle_t& handle) {
    for (const char byte : handle.reserved) {
        char digits[3];
        std::snprintf(digits, sizeof digits, "%02x", static_cast<unsigned char>(byte));
        line += digits;
    }
    line += ' ';
}

// Slices are whole multiples of 4 elements (the sum kernel reads 16 bytes at a time).
std::vector<std::string> task_lines(const Batch& batch, std::size_t count, int workers) {
    const std::size_t per_worker = count / workers / 4 * 4;
    std::vector<std::string> lines;
    for (int w = 0; w < workers; ++w) {
        const std::size_t offset = w * per_worker;
        const std::size_t slice = w + 1 == workers ? count - offset : per_worker;
        std::string line;
        append_hex(line, batch.input_handle);
        append_hex(line, batch.result_handle);
        lines.push_back(line + std::to_string(offset) + " " + std::to_string(slice) + "\n");
    }
    return lines;
}

// Step 3. The worker reads its line back: the handles, byte by byte, and its slice.
struct SliceTask {
    cudaIpcMemHandle_t input;
    cudaIpcMemHandle_t result;
    std::size_t offset;
    std::size_t count;
};

bool read_hex(const char*& text, cudaIpcMemHandle_t& handle) {
    for (char& byte : handle.reserved) {
        unsigned value = 0;
        if (std::sscanf(text, "%2x", &value) != 1) return false;
        byte = static_cast<char>(value);
        text += 2;
    }
    return *text++ == ' ';
}

bool parse_task_line(const std::string& line, SliceTask* task) {
    const char* text = line.c_str();
    return read_hex(text, task->input) && read_hex(text, task->result) &&
           std::sscanf(text, "%zu %zu", &task->offset, &task->count) == 2;
}

// Step 4. The worker opens the handles: they become addresses of this process. It uses the
// master's memory in place (sums its slice, writes 2 * x + 1 into the result), finishes with it,
// and lets go of it.
__global__ void two_x_plus_one(const std::uint32_t* in, std::uint32_t* out, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        out[i] = 2 * in[i] + 1;
    }
}

struct SliceWork {
    void* input;  // where the two buffers appeared in the worker
    void* result;
    std::uint64_t checksum;  // the sum of its slice of the input
};

SliceWork work_on_slice(const SliceTask& task) {
    SliceWork work{};
    CUDA_CHECK(cudaIpcOpenMemHandle(&work.input, task.input, cudaIpcMemLazyEnablePeerAccess));
    CUDA_CHECK(cudaIpcOpenMemHandle(&work.result, task.result, cudaIpcMemLazyEnablePeerAccess));
    const auto* in = static_cast<const std::uint32_t*>(work.input) + task.offset;
    auto* out = static_cast<std::uint32_t*>(work.result) + task.offset;
    work.checksum = sum_on_device(in, task.count);
    two_x_plus_one<<<512, 256>>>(in, out, task.count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());  // done with the memory before letting go of it
    CUDA_CHECK(cudaIpcCloseMemHandle(work.input));
    CUDA_CHECK(cudaIpcCloseMemHandle(work.result));
    return work;
}

// Step 5. The master frees its buffers only once every worker has ended: memory freed while
// another process still has it open is undefined (the cudaIpcOpenMemHandle entry).
void free_batch(const Batch& batch) {
    CUDA_CHECK(cudaFree(batch.input));
    CUDA_CHECK(cudaFree(batch.result));
}

}  // namespace
