// Section memcpy_default: under unified addressing cudaMemcpyDefault works out every copy's
// direction from the two addresses; an explicit kind that contradicts them is undefined.
// (checks/memcpy_default.cu runs both experiments, the second in a child process, and judges them.)
#include "common/buffer.hpp"
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <functional>

namespace {

using tutorial::Buffer;
using tutorial::MemoryKind;

// The four kinds of memory a copy can start or end in.
constexpr MemoryKind kinds[4] = {MemoryKind::pageable, MemoryKind::pinned, MemoryKind::device,
                                 MemoryKind::managed};

// Step 1. One copy with cudaMemcpyDefault. The source holds a known pattern; the destination is
// checked where it lives (a kernel for device memory, the CPU otherwise), never through cudaMemcpy.
// Returns how many values did not arrive.
std::size_t copy_default(MemoryKind from, MemoryKind to, std::size_t count, std::uint32_t seed) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    const Buffer source(from, bytes);
    const Buffer destination(to, bytes);
    fill(source, count, seed);
    fill(destination, count, ~seed);  // something else, so a skipped copy shows
    // The runtime tells from the two addresses where each buffer lives, so one kind serves every
    // direction: host to device, device to host, device to device, host to host.
    CUDA_CHECK(cudaMemcpy(destination.get(), source.get(), bytes, cudaMemcpyDefault));
    return mismatches(destination, count, seed);
}

// Step 2. All 16 ordered pairs of kinds: wrong[from][to], the values that did not arrive.
struct EveryPair {
    std::size_t wrong[4][4];
};

EveryPair copy_every_pair(std::size_t count) {
    EveryPair r{};
    std::uint32_t seed = 1;
    for (int from = 0; from < 4; ++from) {
        for (int to = 0; to < 4; ++to) {
            r.wrong[from][to] = copy_default(kinds[from], kinds[to], count, seed++);
        }
    }
    return r;
}

// Step 3. Copies whose explicit kind contradicts the addresses: undefined behaviour by the
// cudaMemcpy entry, which documents one refusal only, for a value that is no cudaMemcpyKind.
struct KindTried {
    const char* what;
    cudaMemcpyKind kind;
    cudaError_t status;  // no CUDA_CHECK: what cudaMemcpy returns is the lesson
    bool arrived;        // the destination holds the source's data
};

// report() hears of each copy as soon as it returns: should a later one bring the process down,
// what the earlier ones did is known.
void copy_with_wrong_kinds(std::size_t count, const std::function<void(const KindTried&)>& report) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    const Buffer device_a(MemoryKind::device, bytes), device_b(MemoryKind::device, bytes);
    const Buffer pinned(MemoryKind::pinned, bytes), pageable(MemoryKind::pageable, bytes);
    fill(device_a, count, 11);
    fill(pinned, count, 12);
    fill(pageable, count, 13);
    const auto copy_as = [&](const char* what, const Buffer& destination, const Buffer& source,
                             std::uint32_t seed, cudaMemcpyKind kind) {
        fill(destination, count, 99);  // so that a copy that did nothing shows
        const cudaError_t status = cudaMemcpy(destination.get(), source.get(), bytes, kind);
        // A failed call also leaves its error behind as the "last error"; clear it, or the launch
        // check after the next kernel would report it as that kernel's failure.
        (void)cudaGetLastError();
        report({what, kind, status, mismatches(destination, count, seed) == 0});
    };
    copy_as("device -> device as cudaMemcpyHostToDevice", device_b, device_a, 11,
            cudaMemcpyHostToDevice);
    copy_as("pinned -> device as cudaMemcpyDeviceToHost", device_b, pinned, 12,
            cudaMemcpyDeviceToHost);
    copy_as("pageable -> device as cudaMemcpyDeviceToDevice", device_b, pageable, 13,
            cudaMemcpyDeviceToDevice);
    copy_as("device -> device with kind 7 (no such kind)", device_b, device_a, 11,
            static_cast<cudaMemcpyKind>(7));
}

}  // namespace
