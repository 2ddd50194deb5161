#include "common/harness/requires.hpp"

#include "common/check.hpp"
#include "common/device.hpp"
#include "common/text.hpp"

#include <cctype>
#include <cstdio>

namespace tutorial {

std::string why_too_small(std::size_t bytes, std::size_t least, const std::string& what) {
    if (bytes >= least) return "";
    return "below " + format_bytes(least) + " (this run: " + format_bytes(bytes) + ") " + what;
}

std::string why_too_little_free(std::size_t least, const std::string& what) {
    const std::size_t free_now = free_device_memory();
    if (free_now >= least) return "";
    return "with " + format_bytes(free_now) + " free (it needs " + format_bytes(least) + ") " + what;
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
                return format(
                    "GPU %d cannot access GPU %d's memory (cudaDeviceCanAccessPeer = 0): "
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

}  // namespace tutorial
