#include "ipc_common.hpp"

#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

tutorial::ChildResult child_result(int status) {
    tutorial::ChildResult r;
    r.exited = WIFEXITED(status);
    r.exit_code = r.exited ? WEXITSTATUS(status) : -1;
    r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return r;
}

std::uint64_t slice_sum(std::size_t offset, std::size_t count, std::uint32_t seed) {
    std::uint64_t sum = 0;
    for (std::size_t i = offset; i < offset + count; ++i) sum += pattern(i, seed);
    return sum;
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
    std::size_t fitting =
        fit(tutorial::free_device_memory(), need.device_fixed, context_bytes + need.device_each);
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
