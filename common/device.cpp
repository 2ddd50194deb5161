#include "common/device.hpp"

#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/report.hpp"

#include <cstdio>

namespace tutorial {

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

std::size_t free_device_memory() {
    std::size_t free_bytes = 0;
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return free_bytes;
}

Result check_device_facts(Context& ctx, const char* first_source, const char* second_source,
                          const std::vector<DeviceFact>& facts, const std::string& conclusion) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx.device));
    std::printf(
        "Device %d, %s (compute capability %d.%d). Each property is read twice,\n"
        "through %s and through %s; the two must agree.\n\n",
        ctx.device, prop.name, prop.major, prop.minor, first_source, second_source);
    Table table({{"property"},
                 {first_source, Align::right},
                 {second_source, Align::right},
                 {"what it means here"}});
    int disagreements = 0;
    for (const DeviceFact& fact : facts) {
        const bool agree = fact.first == fact.second;
        disagreements += agree ? 0 : 1;
        table.add_row({fact.name, std::to_string(fact.first),
                       std::to_string(fact.second) + (agree ? "" : " (!)"), fact.meaning});
    }
    table.print();
    if (!conclusion.empty()) std::printf("\n%s\n", conclusion.c_str());
    return ctx.verdict(disagreements == 0, format("%d of %zu properties agree between %s and %s",
                                                  static_cast<int>(facts.size()) - disagreements,
                                                  facts.size(), first_source, second_source));
}

}  // namespace tutorial
