// Section bench: what IPC saves. A worker gets the master's data through an IPC handle, reading
// the master's memory in place, or through a pipe, uploading a copy of its own; each is timed.
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

// Step 1. Through IPC, the master makes one handle, the same for every worker.
cudaIpcMemHandle_t share(std::uint32_t* data) {
    cudaIpcMemHandle_t handle{};
    CUDA_CHECK(cudaIpcGetMemHandle(&handle, data));
    return handle;
}

// Step 2. A worker opens it. Opening is a CPU call, timed with the host clock. The first open is
// the one every worker pays (it maps the master's memory into this process); the driver may keep
// parts of that for the next ones, so re-opens are timed apart. The last open stays open.
struct Opened {
    void* data;
    double first_open_ms, reopen_ms, close_ms;  // the last two: medians
};

Opened open_timed(const cudaIpcMemHandle_t& handle, int opens) {
    std::vector<double> open_ms;
    std::vector<double> close_ms;
    void* data = nullptr;
    for (int r = 0; r < opens; ++r) {
        tutorial::HostTimer timer;
        CUDA_CHECK(cudaIpcOpenMemHandle(&data, handle, cudaIpcMemLazyEnablePeerAccess));
        open_ms.push_back(timer.elapsed_ms());
        if (r + 1 == opens) break;  // keep the last one open
        timer.restart();
        CUDA_CHECK(cudaIpcCloseMemHandle(data));
        close_ms.push_back(timer.elapsed_ms());
    }
    const double first_open_ms = open_ms.front();
    open_ms.erase(open_ms.begin());
    return {data, first_open_ms, tutorial::median(open_ms), tutorial::median(close_ms)};
}

// Step 3. It reads the master's memory in place: a kernel that reads every byte, timed with
// events around the kernel alone; 1 warm-up, then the median of `runs`.
double read_in_place_gbps(const std::uint32_t* data, std::size_t count, int runs) {
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

// Step 4. Without IPC, the master copies the data to pinned host memory once, the bytes flow
// through each worker's pipe into pinned memory there, and each worker uploads its own copy.
std::uint32_t* copy_to_host(const std::uint32_t* data, std::size_t bytes) {
    std::uint32_t* host = nullptr;
    CUDA_CHECK(cudaMallocHost(&host, bytes));
    CUDA_CHECK(cudaMemcpy(host, data, bytes, cudaMemcpyDeviceToHost));
    return host;
}

void upload_copy(std::uint32_t* device, const std::uint32_t* host, std::size_t count) {
    CUDA_CHECK(cudaMemcpy(device, host, count * sizeof *host, cudaMemcpyHostToDevice));
}

}  // namespace
