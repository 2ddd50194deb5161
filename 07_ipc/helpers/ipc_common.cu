#include "ipc_common.hpp"

#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

std::string to_hex(const void* data, std::size_t bytes) {
    static const char digits[] = "0123456789abcdef";
    const auto* p = static_cast<const unsigned char*>(data);
    std::string text;
    for (std::size_t i = 0; i < bytes; ++i) {
        text += digits[p[i] >> 4];
        text += digits[p[i] & 15];
    }
    return text;
}

bool from_hex(const std::string& text, void* data, std::size_t bytes) {
    if (text.size() != 2 * bytes) return false;
    auto* p = static_cast<unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) {
        unsigned value = 0;
        if (std::sscanf(text.c_str() + 2 * i, "%2x", &value) != 1) return false;
        p[i] = static_cast<unsigned char>(value);
    }
    return true;
}

std::string handle_line(const cudaIpcMemHandle_t& handle, std::size_t number) {
    return to_hex(&handle, sizeof handle) + " " + std::to_string(number) + "\n";
}

bool read_handle_line(cudaIpcMemHandle_t& handle, std::size_t& number) {
    std::string line;
    if (tutorial::read_input_line(line, task_timeout_s) != tutorial::Input::received) return false;
    char hex[2 * sizeof(cudaIpcMemHandle_t) + 1] = {};
    return std::sscanf(line.c_str(), "%128s %zu", hex, &number) == 2 &&
           from_hex(hex, &handle, sizeof handle);
}

namespace {

__global__ void transform_kernel(const std::uint32_t* input, std::uint32_t* result,
                                 std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        result[i] = 2 * input[i] + 1;
    }
}

}  // namespace

void transform(const std::uint32_t* input, std::uint32_t* result, std::size_t count,
               cudaStream_t stream) {
    transform_kernel<<<512, 256, 0, stream>>>(input, result, count);
    CUDA_CHECK_LAUNCH();
}

std::uint64_t slice_sum(std::size_t offset, std::size_t count, std::uint32_t seed) {
    std::uint64_t sum = 0;
    for (std::size_t i = offset; i < offset + count; ++i) sum += pattern(i, seed);
    return sum;
}

double read_gbps(const std::uint32_t* data, std::size_t count, int runs) {
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    tutorial::EventTimer timer;
    const double ms = tutorial::median_ms(1, runs, [&] {
        CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
        timer.start();
        sum_on_device_async(data, count, sum, nullptr);
        timer.stop();
        return timer.elapsed_ms();
    });
    CUDA_CHECK(cudaFree(sum));
    return tutorial::gb_per_s(count * sizeof *data, ms);
}

std::string why_no_legacy_ipc(int device) {
    int supported = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrIpcEventSupport, device));
    return supported == 1 ? "" : "legacy IPC is not supported here (ipcEventSupported = 0)";
}

namespace {

constexpr std::size_t context_bytes = std::size_t{768} << 20;

// What Linux says the host can still give without swapping (MemAvailable), or 0 if unknown.
std::size_t available_host_memory() {
    std::FILE* meminfo = std::fopen("/proc/meminfo", "r");
    if (meminfo == nullptr) return 0;
    char key[64] = {};
    unsigned long long kib = 0;
    std::size_t bytes = 0;
    while (std::fscanf(meminfo, "%63s %llu kB", key, &kib) == 2) {
        if (std::string(key) == "MemAvailable:") bytes = static_cast<std::size_t>(kib) * 1024;
    }
    std::fclose(meminfo);
    return bytes;
}

// How many workers the free memory holds, by device memory and by host memory.
std::size_t fit(std::size_t free, std::size_t fixed, std::size_t each) {
    if (free <= fixed) return 0;
    return each == 0 ? SIZE_MAX : (free - fixed) / each;
}

}  // namespace

int workers_fitting(int wanted, const WorkerMemory& need) {
    std::size_t fitting = fit(tutorial::free_device_memory(), need.device_fixed,
                              context_bytes + need.device_each);
    const std::size_t host = available_host_memory();
    if (host > 0) fitting = std::min(fitting, fit(host, need.host_fixed, need.host_each));
    return static_cast<int>(std::min<std::size_t>(fitting, static_cast<std::size_t>(wanted)));
}

std::string workers_note(int wanted, int fitting, const WorkerMemory& need) {
    if (fitting >= wanted) return "";
    return tutorial::format(
        "%d workers need about %s of free device memory (a context and %s each, %s for the "
        "master) and %s of host memory; %s and %s are free: %d fit",
        wanted,
        tutorial::format_bytes(need.device_fixed + wanted * (context_bytes + need.device_each))
            .c_str(),
        tutorial::format_bytes(need.device_each).c_str(),
        tutorial::format_bytes(need.device_fixed).c_str(),
        tutorial::format_bytes(need.host_fixed + wanted * need.host_each).c_str(),
        tutorial::format_bytes(tutorial::free_device_memory()).c_str(),
        tutorial::format_bytes(available_host_memory()).c_str(), fitting);
}
