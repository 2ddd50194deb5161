#include "common/device.hpp"

#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/report.hpp"

#include <algorithm>
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

std::size_t fit_in_free_memory(std::size_t wanted, double share, std::size_t multiple) {
    const auto room = static_cast<std::size_t>(static_cast<double>(free_device_memory()) * share);
    const std::size_t fits = room / multiple * multiple;
    return std::max(multiple, std::min(wanted, fits));
}

Result check_predictions(Context& ctx, const std::vector<Prediction>& predictions,
                         const std::string& conclusion) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx.device));
    std::printf(
        "Device %d, %s (compute capability %d.%d). Each property predicts a behaviour; the\n"
        "section tries the behaviour and compares.\n\n",
        ctx.device, prop.name, prop.major, prop.minor);
    Table table({{"property"}, {"value", Align::right}, {"predicts"}, {"seen"}});
    for (const Prediction& p : predictions)
        table.add_row({p.property, std::to_string(p.value), p.predicts, p.seen});
    table.print();
    std::printf("\n");
    int held = 0;
    for (const Prediction& p : predictions) {
        Claim claim =
            observed(p.property + " = " + std::to_string(p.value) + " predicts: " + p.predicts,
                     p.came_true, p.seen,
                     "the property and the behaviour disagree: a driver or system "
                     "setting (a virtual machine, MPS, a restricted container) may "
                     "limit what the device reports it can do");
        claim.evidence = p.evidence;
        held += ctx.claim(claim) ? 1 : 0;
    }
    if (!conclusion.empty()) std::printf("\n%s\n", conclusion.c_str());
    return ctx.verdict(held == static_cast<int>(predictions.size()),
                       format("%d of %zu properties predicted what the device did (or could not "
                              "be judged)",
                              held, predictions.size()));
}

}  // namespace tutorial
