// Section memcpy_default: under unified addressing cudaMemcpyDefault works out every copy's
// direction from the two addresses; an explicit kind that contradicts them is undefined. Alone:
//   nvcc -std=c++17 -I. 01_uva/memcpy_default.cu common/standalone.cu -o build/memcpy_default
//   (or in 01_uva/: nvcc -std=c++17 -I.. memcpy_default.cu ../common/standalone.cu
//       -o ../build/memcpy_default)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace {

// The four kinds of memory a copy can start or end in, in this order: pageable, pinned, device,
// managed.
constexpr int kinds = 4;
constexpr int device_kind = 2;

// One buffer of each kind, each allocated with its own call.
struct EachKind {
    std::uint32_t* at[kinds];
};

EachKind allocate_each_kind(std::size_t bytes) {
    EachKind k{};
    k.at[0] = static_cast<std::uint32_t*>(std::malloc(bytes));  // pageable: CUDA never sees it
    CUDA_CHECK(cudaMallocHost(&k.at[1], bytes));                // pinned host memory
    CUDA_CHECK(cudaMalloc(&k.at[2], bytes));                    // device memory
    CUDA_CHECK(cudaMallocManaged(&k.at[3], bytes));             // managed memory
    return k;
}

void free_each_kind(const EachKind& k) {
    std::free(k.at[0]);
    CUDA_CHECK(cudaFreeHost(k.at[1]));
    CUDA_CHECK(cudaFree(k.at[2]));
    CUDA_CHECK(cudaFree(k.at[3]));
}

// A known pattern, written and checked where the memory lives (a kernel for device memory, the
// CPU for the rest), so that no check relies on the copy it checks.
void write_pattern(int kind, std::uint32_t* data, std::size_t count, std::uint32_t seed) {
    if (kind == device_kind)
        fill_on_device(data, count, seed);
    else
        fill_on_host(data, count, seed);
}

std::size_t wrong_values(int kind, const std::uint32_t* data, std::size_t count,
                         std::uint32_t seed) {
    return kind == device_kind ? mismatches_on_device(data, count, seed)
                               : mismatches_on_host(data, count, seed);
}

// What the walkthrough found: wrong[from][to], the values that did not arrive.
struct Found {
    std::size_t wrong[kinds][kinds];
};

Found walkthrough(std::size_t bytes) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    Found found{};
    // 1. One buffer of each kind to copy from, and one of each to copy to.
    const EachKind sources = allocate_each_kind(bytes);
    const EachKind destinations = allocate_each_kind(bytes);

    // 2. All 16 ordered pairs, each copy with cudaMemcpyDefault: the runtime tells from the two
    //    addresses where each buffer lives, so one kind serves every direction (host to device,
    //    device to host, device to device, host to host).
    std::uint32_t seed = 1;
    for (int from = 0; from < kinds; ++from) {
        for (int to = 0; to < kinds; ++to, ++seed) {
            write_pattern(from, sources.at[from], count, seed);
            // The destination holds something else first, so that a skipped copy shows.
            write_pattern(to, destinations.at[to], count, ~seed);
            CUDA_CHECK(cudaMemcpy(destinations.at[to], sources.at[from], bytes, cudaMemcpyDefault));
            found.wrong[from][to] = wrong_values(to, destinations.at[to], count, seed);
        }
    }
    free_each_kind(sources);
    free_each_kind(destinations);
    return found;
}

// The mistake: copies whose explicit kind contradicts the addresses, which the cudaMemcpy entry
// calls undefined; a value that is no cudaMemcpyKind at all breaks its rule that kind must be
// one of them, and it names no outcome for that either. Without unified addressing the kind is
// all the runtime has, and a wrong one can crash the program.
struct KindTried {
    const char* what;
    cudaMemcpyKind kind;
    cudaError_t status;  // no CUDA_CHECK: what cudaMemcpy returns is the lesson
    bool arrived;        // the destination holds the source's data
};

std::vector<KindTried> copy_with_wrong_kinds(std::size_t count) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    std::uint32_t *device_a = nullptr, *device_b = nullptr, *pinned = nullptr;
    CUDA_CHECK(cudaMalloc(&device_a, bytes));
    CUDA_CHECK(cudaMalloc(&device_b, bytes));
    CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    std::vector<std::uint32_t> pageable(count);
    fill_on_device(device_a, count, 11);
    fill_on_host(pinned, count, 12);
    fill_on_host(pageable.data(), count, 13);
    std::vector<KindTried> tried;
    const auto copy_as = [&](const char* what, std::uint32_t* destination,
                             const std::uint32_t* source, std::uint32_t seed, cudaMemcpyKind kind) {
        fill_on_device(destination, count, 99);  // so that a copy that did nothing shows
        const cudaError_t status = cudaMemcpy(destination, source, bytes, kind);
        // A failed call also leaves its error behind as the "last error"; clear it, or the launch
        // check after the next kernel would report it as that kernel's failure.
        (void)cudaGetLastError();
        tried.push_back({what, kind, status, mismatches_on_device(destination, count, seed) == 0});
    };
    copy_as("device -> device as cudaMemcpyHostToDevice", device_b, device_a, 11,
            cudaMemcpyHostToDevice);
    copy_as("pinned -> device as cudaMemcpyDeviceToHost", device_b, pinned, 12,
            cudaMemcpyDeviceToHost);
    copy_as("pageable -> device as cudaMemcpyDeviceToDevice", device_b, pageable.data(), 13,
            cudaMemcpyDeviceToDevice);
    copy_as("device -> device with kind 7 (no such kind)", device_b, device_a, 11,
            static_cast<cudaMemcpyKind>(7));
    CUDA_CHECK(cudaFreeHost(pinned));
    CUDA_CHECK(cudaFree(device_b));
    CUDA_CHECK(cudaFree(device_a));
    return tried;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>

int main() {
    const Found found = walkthrough(std::size_t{1} << 20);
    int arrived = 0;
    for (const auto& row : found.wrong) {
        for (std::size_t wrong : row) arrived += wrong == 0 ? 1 : 0;
    }
    std::printf("cudaMemcpyDefault, 1 MiB between every pair of four kinds: %d of 16 arrived\n",
                arrived);
    for (const KindTried& t : copy_with_wrong_kinds(std::size_t{1} << 18)) {
        std::printf("%-48s -> %s, data %s\n", t.what, cudaGetErrorName(t.status),
                    t.arrived ? "copied" : "not copied");
    }
    return arrived == 16 ? 0 : 1;
}
#endif
