// Section remapping: one range of addresses, other memory behind it over time; what is forbidden.
// Built alone, from the course's folder (mkdir -p build first), then ./build/remapping:
//   nvcc -std=c++17 -I. 06_vmm/remapping.cu common/standalone.cu -o build/remapping
//   (or in 06_vmm/: nvcc -std=c++17 -I.. remapping.cu ../common/standalone.cu
//       -o ../build/remapping)  (on the same line)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// Mapping puts an allocation behind the range; access belongs to the mapping, so every new
// mapping must be granted it again.
void map_at(CUdeviceptr range, std::size_t bytes, CUmemGenericAllocationHandle memory, int device) {
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    CU_CHECK(cuMemMap(range, bytes, 0, memory, 0));
    tutorial::vmm_set_access(range, bytes, device);
}

// Unmapped, the memory lives on in its handle, contents and all, until cuMemRelease.
void unmap(CUdeviceptr range, std::size_t bytes) {
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    CU_CHECK(cuMemUnmap(range, bytes));
}

// What the walkthrough found: per round, the values that were not what the mapped allocation
// holds (each is filled once, the first time it is mapped).
struct Found {
    std::size_t bytes = 0;
    CUdeviceptr range = 0;
    std::vector<std::size_t> wrong;  // one entry per round
};

Found walkthrough(int device, int rounds) {
    Found found;
    // 1. Two allocations a and b of one granule, and one range of addresses for both.
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);
    found.bytes = tutorial::vmm_granularity(prop);
    const CUmemGenericAllocationHandle memory[2] = {tutorial::vmm_create(prop, found.bytes),
                                                    tutorial::vmm_create(prop, found.bytes)};
    const std::uint32_t seed[2] = {43, 47};  // the pattern each one holds
    found.range = tutorial::vmm_reserve(found.bytes, 0);
    auto* data = reinterpret_cast<std::uint32_t*>(found.range);
    const std::size_t count = found.bytes / sizeof *data;
    // 2. In turns: map a (or b), grant access, fill it the first time, check it, unmap. Each
    //    round shows what that allocation was filled with, whatever the range held in between.
    for (int round = 0; round < rounds; ++round) {
        const int which = round % 2;
        map_at(found.range, found.bytes, memory[which], device);
        if (round < 2) fill_on_device(data, count, seed[which]);
        found.wrong.push_back(mismatches_on_device(data, count, seed[which]));
        unmap(found.range, found.bytes);
    }
    // 3. The range is unmapped: its addresses can go; then the memory, with its handles.
    tutorial::vmm_free(found.range, found.bytes);
    tutorial::vmm_release(memory[0]);
    tutorial::vmm_release(memory[1]);
    return found;
}

// The mistakes: mapping over a range that is mapped (another allocation, or the same one again),
// and giving back addresses that are still mapped. Each call returns its answer (none passes
// through CU_CHECK); the addresses freed while mapped leave this process's books undone.
struct Forbidden {
    CUresult over, same, freed;
};

Forbidden forbidden_calls(int device) {
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    const CUmemAllocationProp prop = tutorial::vmm_properties(device);
    const std::size_t g = tutorial::vmm_granularity(prop);
    const CUmemGenericAllocationHandle a = tutorial::vmm_create(prop, g);
    const CUmemGenericAllocationHandle b = tutorial::vmm_create(prop, g);
    const CUdeviceptr range = tutorial::vmm_reserve(g, 0);
    tutorial::vmm_map(range, g, a);
    Forbidden f{};
    f.over = cuMemMap(range, g, 0, b, 0);  // b over the mapped a
    f.same = cuMemMap(range, g, 0, a, 0);  // a over itself
    f.freed = cuMemAddressFree(range, g);  // a is still mapped there
    return f;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
// ./remapping runs the walkthrough; ./remapping forbidden makes the forbidden calls instead.
int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "forbidden") {
        const Forbidden f = forbidden_calls(0);
        std::printf(
            "cuMemMap(b) over a: %s; cuMemMap(a) over itself: %s; cuMemAddressFree of "
            "the mapped range: %s\n",
            tutorial::driver_error_name(f.over), tutorial::driver_error_name(f.same),
            tutorial::driver_error_name(f.freed));
        return 0;
    }
    const Found found = walkthrough(0, 4);
    std::size_t wrong = 0;
    for (const std::size_t w : found.wrong) wrong += w;
    std::printf("a and b mapped in turns at 0x%llx, %zu rounds: %zu values wrong\n",
                static_cast<unsigned long long>(found.range), found.wrong.size(), wrong);
    return wrong == 0 ? 0 : 1;
}
#endif
