// Section bench: what IPC saves, against sending the bytes and uploading a copy.
// Built alone, from the course's folder (mkdir -p build first), then ./build/bench:
//   nvcc -std=c++17 -I. 07_ipc/bench.cu common/standalone.cu -o build/bench
//   (or in 07_ipc/: nvcc -std=c++17 -I.. bench.cu ../common/standalone.cu -o ../build/bench)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/process.hpp"
#include "common/timing.hpp"
#include <unistd.h>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>
namespace {

// Workers get the master's data through an IPC handle, reading the master's memory in place, or
// as bytes through their socket, uploading a copy of their own; each worker times its way.

// Workers: this program started again, a Unix socket as stdin and stdout (common/process.hpp).
using tutorial::Worker, tutorial::read_all, tutorial::send_all, tutorial::start_worker,
    tutorial::wait_for;

constexpr std::uint32_t bench_seed = 71;  // the master's data: pattern(i, bench_seed)

// Opening is a CPU call, timed with the host clock. The first open is the one every worker pays
// (it maps the master's memory into this process); the open of a handle this context has open
// already only counts a reference (the cudaIpcOpenMemHandle entry), so re-opens, after a close,
// are timed apart. The last open stays open.
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

// Reading memory in place: a kernel that reads every byte, timed with events around the kernel
// alone; 1 warm-up, then the median of `runs`.
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

// A worker through IPC: the handle and the count in, then it opens the handle (timed), reads the
// master's memory in place (timed, and summed) and answers.
struct ByHandle {
    cudaIpcMemHandle_t handle;
    std::size_t count;
};

struct IpcAnswer {
    double first_open_ms, reopen_ms, close_ms, read_gbps;
    unsigned long long sum;
};

int ipc_worker(int device) {
    CUDA_CHECK(cudaSetDevice(device));
    ByHandle task{};
    if (!read_all(STDIN_FILENO, &task, sizeof task)) return 4;
    CUDA_CHECK(cudaFree(nullptr));  // the context first: it is no part of an open
    const Opened opened = open_timed(task.handle, 10);
    const auto* values = static_cast<const std::uint32_t*>(opened.data);
    IpcAnswer answer{opened.first_open_ms, opened.reopen_ms, opened.close_ms, 0.0, 0};
    answer.sum = sum_on_device(values, task.count);
    answer.read_gbps = read_in_place_gbps(values, task.count, 5);
    CUDA_CHECK(cudaIpcCloseMemHandle(opened.data));
    return send_all(STDOUT_FILENO, &answer, sizeof answer) ? 0 : 4;
}

// A worker without IPC: the count, then the bytes into pinned memory, uploaded into a copy of its
// own. It times the data's arrival in its device memory from the first byte on (the master may
// still be feeding another worker before it), and sums its copy.
struct CopyAnswer {
    double arrive_ms;
    unsigned long long sum;
};

int copy_worker(int device) {
    CUDA_CHECK(cudaSetDevice(device));
    std::size_t count = 0;
    if (!read_all(STDIN_FILENO, &count, sizeof count)) return 4;
    std::uint32_t* host = nullptr;
    std::uint32_t* copy = nullptr;
    CUDA_CHECK(cudaMallocHost(&host, count * sizeof *host));
    CUDA_CHECK(cudaMalloc(&copy, count * sizeof *copy));
    if (!read_all(STDIN_FILENO, host, sizeof *host)) return 4;  // the first bytes
    tutorial::HostTimer timer;
    if (!read_all(STDIN_FILENO, host + 1, (count - 1) * sizeof *host)) return 4;
    CUDA_CHECK(cudaMemcpy(copy, host, count * sizeof *host, cudaMemcpyHostToDevice));
    CopyAnswer answer{timer.elapsed_ms(), sum_on_device(copy, count)};
    CUDA_CHECK(cudaFree(copy));
    CUDA_CHECK(cudaFreeHost(host));
    return send_all(STDOUT_FILENO, &answer, sizeof answer) ? 0 : 4;
}

// What the master found: each way's wall time (starting the workers to the last one's end), the
// workers' answers and how each ended (waitpid's status), and its own read of the data.
struct Found {
    double ipc_wall_ms = 0.0, copy_wall_ms = 0.0;
    std::vector<IpcAnswer> ipc;  // the workers that answered
    std::vector<CopyAnswer> copies;
    std::vector<int> statuses;  // every worker's, the IPC workers first
    double own_gbps = 0.0;
    unsigned long long own_sum = 0;
};

std::vector<std::string> role(std::vector<std::string> self, const char* name, int device) {
    self.insert(self.end(), {name, std::to_string(device)});
    return self;
}

// Through IPC: one handle, the same for every worker, who opens it and reads in place.
void share_by_ipc(std::uint32_t* data, std::size_t count, int workers,
                  const std::vector<std::string>& command, Found& found) {
    ByHandle task{{}, count};
    CUDA_CHECK(cudaIpcGetMemHandle(&task.handle, data));
    std::vector<Worker> started;
    for (int w = 0; w < workers; ++w) started.push_back(start_worker(command));
    for (const Worker& each : started) send_all(each.socket, &task, sizeof task);
    for (const Worker& each : started) {
        IpcAnswer answer{};
        if (read_all(each.socket, &answer, sizeof answer)) found.ipc.push_back(answer);
        found.statuses.push_back(wait_for(each));
    }
}

// Without IPC: the data copied to pinned host memory once, then the bytes through each worker's
// socket, one worker after another; each uploads a copy of its own.
void share_by_copy(const std::uint32_t* data, std::size_t count, int workers,
                   const std::vector<std::string>& command, Found& found) {
    std::uint32_t* host = nullptr;
    CUDA_CHECK(cudaMallocHost(&host, count * sizeof *host));
    CUDA_CHECK(cudaMemcpy(host, data, count * sizeof *host, cudaMemcpyDeviceToHost));
    std::vector<Worker> started;
    for (int w = 0; w < workers; ++w) started.push_back(start_worker(command));
    for (const Worker& each : started) {
        send_all(each.socket, &count, sizeof count);
        send_all(each.socket, host, count * sizeof *host);
    }
    for (const Worker& each : started) {
        CopyAnswer answer{};
        if (read_all(each.socket, &answer, sizeof answer)) found.copies.push_back(answer);
        found.statuses.push_back(wait_for(each));
    }
    CUDA_CHECK(cudaFreeHost(host));
}

// `self` runs this program again, in the role named after it ("ipc_worker" or "copy_worker" and
// the device).
Found walkthrough(std::size_t bytes, int workers, int device,
                  const std::vector<std::string>& self) {
    Found found;
    const std::size_t count = bytes / sizeof(std::uint32_t);
    // 1. The master's data, on the GPU.
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMalloc(&data, bytes));
    fill_on_device(data, count, bench_seed);
    // 2. Through IPC: every worker opens the handle and reads the data where it is.
    tutorial::HostTimer wall;
    share_by_ipc(data, count, workers, role(self, "ipc_worker", device), found);
    found.ipc_wall_ms = wall.elapsed_ms();
    // 3. Without IPC: every worker receives the bytes and uploads a copy of its own.
    wall.restart();
    share_by_copy(data, count, workers, role(self, "copy_worker", device), found);
    found.copy_wall_ms = wall.elapsed_ms();
    // 4. For comparison, the master reads its own memory as the workers read theirs.
    found.own_sum = sum_on_device(data, count);
    found.own_gbps = read_in_place_gbps(data, count, 5);
    CUDA_CHECK(cudaFree(data));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
// Alone, this program is the master of 2 workers each way over 64 MiB; the workers are the same
// program, started as `<program> ipc_worker <device>` and `<program> copy_worker <device>`.
int main(int argc, char** argv) {
    const std::string as = argc == 3 ? argv[1] : "";
    if (as == "ipc_worker") return ipc_worker(std::atoi(argv[2]));
    if (as == "copy_worker") return copy_worker(std::atoi(argv[2]));
    const Found f = walkthrough(std::size_t{64} << 20, 2, 0, {"/proc/self/exe"});
    for (const IpcAnswer& a : f.ipc) {
        std::printf("an IPC worker: first open %.3f ms, then %.3f ms; read in place at %.0f GB/s\n",
                    a.first_open_ms, a.reopen_ms, a.read_gbps);
    }
    for (const CopyAnswer& c : f.copies) {
        std::printf("a copying worker: the data arrived in its device memory in %.3f ms\n",
                    c.arrive_ms);
    }
    std::printf("all done: IPC in %.0f ms, copies in %.0f ms; the master reads at %.0f GB/s\n",
                f.ipc_wall_ms, f.copy_wall_ms, f.own_gbps);
    return f.ipc.size() == 2 && f.copies.size() == 2 ? 0 : 1;
}
#endif
