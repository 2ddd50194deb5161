// Checks of section support: runs the walkthrough of ../support.cpp, prints the VMM attributes
// and the granularity, and tries the prediction of VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED on one
// granule.
#include "06_vmm/support.cpp"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/predictions.hpp"
#include "common/harness/report.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

using tutorial::format_bytes;

namespace {

void add_granularity_rows(tutorial::Table& table, const Granularity& g) {
    table.add_row({"(granularity, minimum)", format_bytes(g.minimum),
                   "sizes and offsets for cuMemCreate/cuMemMap are multiples of this"});
    table.add_row(
        {"(granularity, recommended)", format_bytes(g.recommended), "the size that performs best"});
}

// VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 1 predicts that one granule of physical memory can be
// created, mapped at a reserved address and used by a kernel (the steps `basics` explains). The
// attribute's entry says the device "supports" cuMemAddressReserve, cuMemCreate, cuMemMap and the
// calls that go with them; the cuMemCreate entry says its handle can be mapped with cuMemMap,
// which is the promise tried. Where the attribute is 0, its entry names no error for trying
// anyway: what cuMemCreate then does is observed.
tutorial::Prediction vmm_works(int value, int device) {
    bool worked = false;
    std::string seen;
    if (!value) {
        const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
        const CUmemAllocationProp prop = tutorial::vmm_properties(device);
        CUmemGenericAllocationHandle memory = 0;
        const CUresult result = cuMemCreate(&memory, 2 << 20, &prop, 0);
        if (result == CUDA_SUCCESS) CU_CHECK(DRIVER_FUNCTION(cuMemRelease)(memory));
        worked = result != CUDA_SUCCESS;
        seen = std::string("cuMemCreate of 2 MiB returned ") + tutorial::driver_error_name(result);
    } else {
        const CUmemAllocationProp prop = tutorial::vmm_properties(device);
        const std::size_t bytes = tutorial::vmm_granularity(prop);
        const CUmemGenericAllocationHandle memory = tutorial::vmm_create(prop, bytes);
        const CUdeviceptr address = tutorial::vmm_reserve(bytes, 0);
        tutorial::vmm_map(address, bytes, memory);
        tutorial::vmm_set_access(address, bytes, device);
        auto* data = reinterpret_cast<std::uint32_t*>(address);
        fill_on_device(data, bytes / 4, 17);
        worked = mismatches_on_device(data, bytes / 4, 17) == 0;
        tutorial::vmm_unmap(address, bytes);
        tutorial::vmm_free(address, bytes);
        tutorial::vmm_release(memory);
        seen = worked ? "a kernel wrote and read back a mapped " + format_bytes(bytes) + " granule"
                      : "the mapped granule read back WRONG values";
    }
    return {"VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
            value,
            value ? "cuMemCreate memory mapped with cuMemMap works in a kernel"
                  : "the VMM sections have nothing to run on",
            worked,
            seen,
            value ? tutorial::Evidence::documented : tutorial::Evidence::observed,
            "the VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED entry says what a device with 1 supports, and "
            "names no error for a device with 0",
            tutorial::Entry{"Driver API reference: cuMemCreate", "cuMemMap", "can"}};
}

}  // namespace

tutorial::Result run_support(tutorial::Context& ctx) {
    const Found found = walkthrough(ctx.device);
    const int vmm = found.vmm;
    std::printf("Attributes only the driver API knows:\n");
    tutorial::Table vmm_table(
        {{"CU_DEVICE_ATTRIBUTE_..."}, {"value", tutorial::Align::right}, {"what it means here"}});
    vmm_table.add_row({"VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED", std::to_string(vmm),
                       "cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess work"});
    vmm_table.add_row({"HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED",
                       std::to_string(found.posix_fd),
                       "allocations can be exported as file descriptors (chapter 07)"});
    vmm_table.add_row({"GENERIC_COMPRESSION_SUPPORTED", std::to_string(found.compression),
                       "cuMemCreate may ask for compressible memory"});
    vmm_table.add_row({"GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED", std::to_string(found.rdma),
                       "network cards may read and write VMM allocations directly"});
    if (vmm) add_granularity_rows(vmm_table, found.granularity);
    vmm_table.print();

    std::printf("\n");
    const std::vector<tutorial::Prediction> predictions = {vmm_works(vmm, ctx.device)};
    return tutorial::check_predictions(
        ctx, predictions,
        vmm ? "VMM is supported: address ranges and physical memory can be managed separately."
            : "VMM is not supported on this device: the other sections of this chapter will skip.");
}

TUTORIAL_SECTION(support, run_support);
