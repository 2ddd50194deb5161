// Section granularity_errors: what cuMemCreate, cuMemAddressReserve and cuMemMap say to sizes,
// addresses and offsets that break their entries' rules, and the rounding that avoids all of it.
// Built alone, from the course's folder (mkdir -p build first), then ./build/granularity_errors:
//   nvcc -std=c++17 -I. 06_vmm/granularity_errors.cu common/standalone.cu
//       -o build/granularity_errors  (on the same line)
//   (or in 06_vmm/: nvcc -std=c++17 -I.. granularity_errors.cu ../common/standalone.cu
//       -o ../build/granularity_errors)  (on the same line)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

struct Refusal {
    std::string call;
    std::string rule;  // the rule of the call's entry that it breaks
    CUresult result;
};

// Each call breaks one rule of its entry in the driver API reference, and only that one. Not all
// of them are the granularity `g`: cuMemAddressReserve asks for whole host pages, and cuMemMap's
// offset must be 0 for now, so one granularity (a whole multiple) breaks it too. `memory` is
// 2 * g of physical memory, `range` 4 * g of reserved addresses aligned to g.
std::vector<Refusal> misaligned_calls(const CUmemAllocationProp& prop, std::size_t g,
                                      CUmemGenericAllocationHandle memory, CUdeviceptr range) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    CUmemGenericAllocationHandle unused = 0;
    CUdeviceptr unused_address = 0;
    return {
        {"cuMemCreate(size = granularity + 1)", "size: a multiple of the granularity",
         cuMemCreate(&unused, g + 1, &prop, 0)},
        {"cuMemAddressReserve(size = granularity + 1)", "size: whole host pages",
         cuMemAddressReserve(&unused_address, g + 1, 0, 0, 0)},
        {"cuMemMap(size = half a granularity)", "size: a multiple of the granularity",
         cuMemMap(range, g / 2, 0, memory, 0)},
        {"cuMemMap(address = range + 4 KiB)", "address: a multiple of the granularity",
         cuMemMap(range + 4096, g, 0, memory, 0)},
        {"cuMemMap(offset = one granularity)", "offset: 0, for now",
         cuMemMap(range, g, g, memory, 0)},
    };
}

// The mistakes, made on purpose: the calls above on memory and addresses made for them.
std::vector<Refusal> break_the_rules(int device) {
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);
    const std::size_t g = tutorial::vmm_granularity(prop);
    const CUmemGenericAllocationHandle memory = tutorial::vmm_create(prop, 2 * g);
    const CUdeviceptr range = tutorial::vmm_reserve(4 * g, g);
    const std::vector<Refusal> refusals = misaligned_calls(prop, g, memory, range);
    (void)cudaGetLastError();  // the runtime keeps no error of the driver's calls; to be sure
    tutorial::vmm_release(memory);
    tutorial::vmm_free(range, 4 * g);
    return refusals;
}

// What the walkthrough found.
struct Found {
    std::size_t granularity = 0, bytes = 0;  // the rule, and what `wanted` became under it
    std::size_t wrong = 0;                   // values a kernel read back wrong (0 when right)
};

// The way that keeps every rule: round the size up to the granularity (a whole number of host
// pages too), reserve with the granularity as the alignment, map at the start of the range with
// offset 0.
Found walkthrough(int device, std::size_t wanted) {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    Found found;
    // 1. The rule: the granularity of this kind of memory, and the size rounded up to it.
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);
    found.granularity = tutorial::vmm_granularity(prop);
    found.bytes = tutorial::round_up(wanted, found.granularity);
    // 2. Created, reserved aligned to the granularity, mapped at the start with offset 0.
    CUmemGenericAllocationHandle memory = 0;
    CU_CHECK(cuMemCreate(&memory, found.bytes, &prop, 0));
    CUdeviceptr address = 0;
    CU_CHECK(cuMemAddressReserve(&address, found.bytes, found.granularity, 0, 0));
    CU_CHECK(cuMemMap(address, found.bytes, 0, memory, 0));
    tutorial::vmm_set_access(address, found.bytes, device);
    tutorial::vmm_release(memory);  // the mapping keeps the memory
    // 3. Used by kernels like any device memory.
    auto* data = reinterpret_cast<std::uint32_t*>(address);
    fill_on_device(data, found.bytes / sizeof *data, 31);
    found.wrong = mismatches_on_device(data, found.bytes / sizeof *data, 31);
    // 4. Torn down.
    tutorial::vmm_unmap(address, found.bytes);
    tutorial::vmm_free(address, found.bytes);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
// ./granularity_errors runs the walkthrough; with break_rules it first makes the calls that
// break a rule, and prints what each returned.
int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "break_rules") {
        for (const Refusal& r : break_the_rules(0)) {
            std::printf("%-44s -> %-26s breaks %s\n", r.call.c_str(),
                        tutorial::driver_error_name(r.result), r.rule.c_str());
        }
    }
    const std::size_t wanted = (std::size_t{2} << 20) + 1;
    const Found found = walkthrough(0, wanted);
    std::printf(
        "%zu bytes wanted: %zu created, reserved and mapped (granularity %zu): %zu "
        "values wrong\n",
        wanted, found.bytes, found.granularity, found.wrong);
    return found.wrong == 0 ? 0 : 1;
}
#endif
