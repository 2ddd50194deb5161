#include "common/device.hpp"

#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/text.hpp"

#include <algorithm>
#include <cstdio>

namespace tutorial {

std::string why_no_usable_device() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaSuccess && count > 0) return "";
    (void)cudaGetLastError();
    // cudaErrorInsufficientDriver means either; the driver's version tells them apart: 0
    // where no driver is installed at all.
    int driver = 0;
    const bool no_driver = cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0;
    const std::string hint =
        status == cudaErrorInsufficientDriver && no_driver
            ? "no NVIDIA driver is installed (no GPU here?)"
        : status == cudaErrorInsufficientDriver
            ? format("the NVIDIA driver supports CUDA %d.%d, older than this program's runtime "
                     "(CUDA %d.%d): update the driver",
                     driver / 1000, driver % 1000 / 10, CUDART_VERSION / 1000,
                     CUDART_VERSION % 1000 / 10)
        : status == cudaErrorNoDevice ? "no GPU is visible (is CUDA_VISIBLE_DEVICES empty?)"
                                      : "the GPU cannot be used";
    return "no usable CUDA device: " + hint + " (cudaGetDeviceCount returned " +
           cudaGetErrorName(status) + ")";
}

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

std::string memory_type_name(cudaMemoryType type) {
    switch (type) {
        case cudaMemoryTypeUnregistered: return "cudaMemoryTypeUnregistered";
        case cudaMemoryTypeHost: return "cudaMemoryTypeHost";
        case cudaMemoryTypeDevice: return "cudaMemoryTypeDevice";
        case cudaMemoryTypeManaged: return "cudaMemoryTypeManaged";
    }
    return "cudaMemoryType " + std::to_string(static_cast<int>(type));
}

std::size_t free_device_memory() {
    std::size_t free_bytes = 0;
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return free_bytes;
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
