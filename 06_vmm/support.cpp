// Section `support`: can this device do virtual memory management, and at what granularity?
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/report.hpp"
#include "sections.hpp"

using tutorial::device_attribute;
using tutorial::driver_attribute;
using tutorial::format;

tutorial::Result run_support(tutorial::Context& ctx) {
    // The VMM attributes exist only in the driver API.
    std::printf("Attributes only the driver API knows:\n");
    const int vmm =
        driver_attribute(ctx.device, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
    tutorial::Table vmm_table(
        {{"CU_DEVICE_ATTRIBUTE_..."}, {"value", tutorial::Align::right}, {"what it means here"}});
    vmm_table.add_row({"VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED", std::to_string(vmm),
                       "cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess work"});
    vmm_table.add_row(
        {"HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED",
         std::to_string(driver_attribute(
             ctx.device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)),
         "allocations can be exported as file descriptors (chapter 07)"});
    vmm_table.add_row({"GENERIC_COMPRESSION_SUPPORTED",
                       std::to_string(driver_attribute(
                           ctx.device, CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED)),
                       "cuMemCreate may ask for compressible memory"});
    vmm_table.add_row(
        {"GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED",
         std::to_string(driver_attribute(
             ctx.device, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED)),
         "network cards may read and write VMM allocations directly"});

    // Physical allocations and mappings come in multiples of the granularity.
    if (vmm) {
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = ctx.device;
        const auto cuMemGetAllocationGranularity = DRIVER_FUNCTION(cuMemGetAllocationGranularity);
        std::size_t minimum = 0;
        std::size_t recommended = 0;
        CU_CHECK(cuMemGetAllocationGranularity(&minimum, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        CU_CHECK(cuMemGetAllocationGranularity(&recommended, &prop,
                                               CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
        vmm_table.add_row({"(granularity, minimum)", tutorial::format_bytes(minimum),
                           "sizes and offsets for cuMemCreate/cuMemMap are multiples of this"});
        vmm_table.add_row({"(granularity, recommended)", tutorial::format_bytes(recommended),
                           "the size that performs best"});
    }
    vmm_table.print();
    std::printf("\nAttributes both APIs know:\n");

    const std::vector<tutorial::DeviceFact> facts = {
        {"unifiedAddressing", device_attribute(ctx.device, cudaDevAttrUnifiedAddressing),
         driver_attribute(ctx.device, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING),
         "a VMM range is an ordinary device address, usable in kernels"},
        {"memoryPoolsSupported", device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported),
         driver_attribute(ctx.device, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED),
         "cudaMallocAsync pools, built on the same machinery"},
        {"gpuDirectRDMASupported", device_attribute(ctx.device, cudaDevAttrGPUDirectRDMASupported),
         driver_attribute(ctx.device, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED),
         "GPUDirect RDMA in general"},
    };
    return tutorial::check_device_facts(
        ctx, "cudaDeviceGetAttribute", "cuDeviceGetAttribute", facts,
        vmm ? "VMM is supported: address ranges and physical memory can be managed separately."
            : "VMM is not supported on this device: the other sections of this chapter will skip.");
}
