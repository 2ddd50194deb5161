// Section compression: compressible memory from cuMemCreate; faster for data that compresses?
// Built alone, from the course's folder (mkdir -p build first), then ./build/compression:
//   nvcc -std=c++17 -I. 06_vmm/compression.cu common/standalone.cu -o build/compression
//   (or in 06_vmm/: nvcc -std=c++17 -I.. compression.cu ../common/standalone.cu
//       -o ../build/compression)  (on the same line)
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"
#include "common/vmm.hpp"

#include <cstdint>
#include <cstdio>

namespace {

struct Region {
    CUdeviceptr address;
    std::size_t bytes;
    bool compressed;  // what the driver says it granted
};

// Device memory on `device`; with `compressible`, a request for compression that the driver may
// grant or not (it says which in the properties it reports back for the handle).
CUmemAllocationProp properties(int device, bool compressible) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.allocFlags.compressionType =
        compressible ? CU_MEM_ALLOCATION_COMP_GENERIC : CU_MEM_ALLOCATION_COMP_NONE;
    return prop;
}

// Compressible (if granted) or ordinary memory, mapped (its code follows the walkthrough).
Region make_region(int device, std::size_t bytes, bool compressible);

__global__ void write_zeros(uint4* data, std::size_t vectors) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < vectors;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = make_uint4(0, 0, 0, 0);
    }
}

// The walkthrough's steps, by memory ([compressible]) and contents ([zeros]): phases of the
// story, each one timed wherever steps are watched.
constexpr tutorial::Step writes[2][2] = {
    {{"ordinary memory: a kernel writes the pattern"}, {"ordinary memory: a kernel writes zeros"}},
    {{"compressible memory: a kernel writes the pattern"},
     {"compressible memory: a kernel writes zeros"}}};
constexpr tutorial::Step reads[2][2] = {
    {{"ordinary memory: a kernel reads the pattern"}, {"ordinary memory: a kernel reads zeros"}},
    {{"compressible memory: a kernel reads the pattern"},
     {"compressible memory: a kernel reads zeros"}}};

// What the walkthrough found.
struct Found {
    bool supported = false;  // GENERIC_COMPRESSION_SUPPORTED
    bool granted = false;    // the driver granted the compressible request
    int wrong_sums = 0;      // reads whose sum was not what was written (0 when right)
};

Found walkthrough(int device, std::size_t bytes) {
    Found found;
    // 0. Only a device that supports compression may be asked for it (the Guide's E.3.2.1).
    found.supported =
        tutorial::driver_attribute(device, CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED) == 1;
    if (!found.supported) return found;
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    for (const bool compressible : {true, false}) {
        // 1. The memory: compressible asked for (and what was granted), or ordinary.
        const Region region = make_region(device, bytes, compressible);
        if (compressible) found.granted = region.compressed;
        auto* data = reinterpret_cast<std::uint32_t*>(region.address);
        const std::size_t count = bytes / sizeof *data;
        // 2. Contents that compress (zeros) and contents that do not (the pattern): a kernel
        //    writes the whole buffer, another reads and sums it.
        for (const bool zeros : {true, false}) {
            {
                const tutorial::During during(writes[compressible][zeros]);
                if (zeros) {
                    write_zeros<<<1024, 256>>>(reinterpret_cast<uint4*>(data), count / 4);
                    CUDA_CHECK_LAUNCH();
                } else {
                    fill_on_device_async(data, count, 13, nullptr);
                }
            }
            CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
            {
                const tutorial::During during(reads[compressible][zeros]);
                sum_on_device_async(data, count, sum, nullptr);
            }
            unsigned long long total = 0;
            CUDA_CHECK(cudaMemcpy(&total, sum, sizeof total, cudaMemcpyDeviceToHost));
            found.wrong_sums += total != (zeros ? 0 : pattern_sum(count, 13));
        }
        // 3. Unmapped like any VMM memory: the last mapping goes, and the memory with it.
        tutorial::vmm_unmap(region.address, bytes);
        tutorial::vmm_free(region.address, bytes);
    }
    CUDA_CHECK(cudaFree(sum));
    return found;
}

// Create it, read back what was granted, and map it like any other VMM allocation. `bytes` is a
// multiple of the granularity of both kinds.
Region make_region(int device, std::size_t bytes, bool compressible) {
    static const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    static const auto cuMemGetAllocationPropertiesFromHandle =
        DRIVER_FUNCTION(cuMemGetAllocationPropertiesFromHandle);
    const CUmemAllocationProp prop = properties(device, compressible);
    CUmemGenericAllocationHandle memory = 0;
    CU_CHECK(cuMemCreate(&memory, bytes, &prop, 0));
    CUmemAllocationProp granted{};
    CU_CHECK(cuMemGetAllocationPropertiesFromHandle(&granted, memory));
    const CUdeviceptr address = tutorial::vmm_reserve(bytes, 0);
    tutorial::vmm_map(address, bytes, memory);
    tutorial::vmm_set_access(address, bytes, device);
    tutorial::vmm_release(memory);
    return {address, bytes, granted.allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC};
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::size_t bytes = std::size_t{1} << 30;
    walkthrough(0, bytes);      // the first run loads the kernels: not timed
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(0, bytes);
    times.print();
    if (found.supported && found.granted) {
        // The card's number: the zeros' read gain from compressible memory over the pattern's
        // (GB = 1e9 bytes over the read's GPU ms, events around each kernel).
        const auto gbps = [&](const tutorial::Step& step) {
            return static_cast<double>(bytes) / 1e9 / (times.median_ms(step) * 1e-3);
        };
        const double zeros[2] = {gbps(reads[0][1]), gbps(reads[1][1])};
        const double pattern[2] = {gbps(reads[0][0]), gbps(reads[1][0])};
        std::printf(
            "%zu MiB reads: %.2f times the gain the pattern got (%.0f against %.0f GB/s for "
            "zeros, %.0f against %.0f for the pattern)\n",
            bytes >> 20, (zeros[1] / zeros[0]) / (pattern[1] / pattern[0]), zeros[1], zeros[0],
            pattern[1], pattern[0]);
    }
    std::printf("compression %s, compressible memory %s; %d sums of 4 wrong\n",
                found.supported ? "supported" : "NOT supported",
                found.granted ? "granted" : "NOT granted", found.wrong_sums);
    return found.wrong_sums == 0 ? 0 : 1;
}
#endif
