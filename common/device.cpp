#include "common/device.hpp"

#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace tutorial {

int device_count() {
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    return count;
}

int device_attribute(int device, cudaDeviceAttr attribute) {
    int value = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
    return value;
}

bool every_device_uses_host_pointer_for_registered() {
    for (int d = 0; d < device_count(); ++d) {
        if (device_attribute(d, cudaDevAttrCanUseHostPointerForRegisteredMem) == 0) return false;
    }
    return true;
}

int driver_attribute(int device, CUdevice_attribute attribute) {
    const auto cuDeviceGet = DRIVER_FUNCTION(cuDeviceGet);
    const auto cuDeviceGetAttribute = DRIVER_FUNCTION(cuDeviceGetAttribute);
    CUdevice handle = 0;
    CU_CHECK(cuDeviceGet(&handle, device));
    int value = 0;
    CU_CHECK(cuDeviceGetAttribute(&value, attribute, handle));
    return value;
}

double peak_memory_gbps(int device) {
    const double clock_hz = 1e3 * device_attribute(device, cudaDevAttrMemoryClockRate);
    const double bus_bytes = device_attribute(device, cudaDevAttrGlobalMemoryBusWidth) / 8.0;
    return 2.0 * clock_hz * bus_bytes / 1e9;
}

std::size_t device_memory_used_since(std::size_t free_at_start) {
    const std::size_t free_now = free_device_memory();
    return free_at_start > free_now ? free_at_start - free_now : 0;
}

cudaMemoryType memory_type(const void* pointer) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    return attributes.type;
}

std::size_t free_device_memory() {
    std::size_t free_bytes = 0;
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return free_bytes;
}

double pcie_link_gbps(int device, std::string* what) {
    char bus_id[32] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) return 0.0;
    std::string id = bus_id;
    for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string dir = "/sys/bus/pci/devices/" + id + "/";
    double gts = 0.0;
    int width = 0;
    std::FILE* speed = std::fopen((dir + "current_link_speed").c_str(), "r");
    std::FILE* lanes = std::fopen((dir + "current_link_width").c_str(), "r");
    const bool read = speed != nullptr && lanes != nullptr &&
                      std::fscanf(speed, "%lf", &gts) == 1 && std::fscanf(lanes, "%d", &width) == 1;
    if (speed != nullptr) std::fclose(speed);
    if (lanes != nullptr) std::fclose(lanes);
    if (!read || gts <= 0.0 || width <= 0) return 0.0;
    const double code = gts >= 8.0 ? 128.0 / 130.0 : 8.0 / 10.0;
    if (what != nullptr) *what = format("PCIe %.1f GT/s x%d", gts, width);
    return gts * width * code / 8.0;
}

std::string why_no_peer_access(int gpus) {
    for (int from = 0; from < gpus; ++from) {
        for (int to = 0; to < gpus; ++to) {
            int can = 0;
            if (from != to) CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
            if (from != to && can == 0) {
                return format("GPU %d cannot access GPU %d's memory (cudaDeviceCanAccessPeer = 0): "
                              "no peer access between these GPUs",
                              from, to);
            }
        }
    }
    return "";
}

std::string why_no_on_demand_paging(int device) {
    if (device_attribute(device, cudaDevAttrConcurrentManagedAccess) == 1) return "";
    return "concurrentManagedAccess = 0: managed memory moves as a whole when a kernel is "
           "launched, not page by page on demand (Windows, WSL, Jetson)";
}

std::string why_hardware_coherent(int device) {
    if (device_attribute(device, cudaDevAttrDirectManagedMemAccessFromHost) == 1) {
        return "directManagedMemAccessFromHost = 1: the CPU reaches GPU memory directly, so "
               "pages need not move on access (a hardware-coherent system)";
    }
    if (device_attribute(device, cudaDevAttrPageableMemoryAccessUsesHostPageTables) == 1) {
        return "pageableMemoryAccessUsesHostPageTables = 1: the GPU uses the host's page tables, "
               "so pages need not move on access (a hardware-coherent system)";
    }
    return "";
}

std::string why_pages_need_not_migrate(int device) {
    const std::string no_paging = why_no_on_demand_paging(device);
    return no_paging.empty() ? why_hardware_coherent(device) : no_paging;
}

std::size_t fit_in_free_memory(std::size_t wanted, double share, std::size_t multiple) {
    const auto room = static_cast<std::size_t>(static_cast<double>(free_device_memory()) * share);
    const std::size_t fits = room / multiple * multiple;
    return std::max(multiple, std::min(wanted, fits));
}

bool primary_context_active(int device) {
    static const auto cuInit = DRIVER_FUNCTION(cuInit);
    static const auto cuDeviceGet = DRIVER_FUNCTION(cuDeviceGet);
    static const auto cuDevicePrimaryCtxGetState = DRIVER_FUNCTION(cuDevicePrimaryCtxGetState);
    // cuInit loads and starts the driver; it creates no context (the sections show that too).
    CU_CHECK(cuInit(0));
    CUdevice handle = 0;
    CU_CHECK(cuDeviceGet(&handle, device));
    unsigned int flags = 0;
    int active = 0;
    CU_CHECK(cuDevicePrimaryCtxGetState(handle, &flags, &active));
    return active != 0;
}

}  // namespace tutorial
