// Section `memcpy_default`: under UVA, cudaMemcpyDefault works out the direction of every copy
// from the two addresses; an explicit kind that contradicts them is an error.
#include "common/check.hpp"
#include "common/child.hpp"
#include "common/report.hpp"
#include "patterns.hpp"
#include "sections.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

enum class Kind { pageable, pinned, device, managed };

const char* kind_name(Kind kind) {
    switch (kind) {
        case Kind::pageable: return "pageable (malloc)";
        case Kind::pinned: return "pinned";
        case Kind::device: return "device";
        case Kind::managed: return "managed";
    }
    return "?";
}

std::uint32_t* allocate(Kind kind, std::size_t bytes) {
    void* p = nullptr;
    switch (kind) {
        case Kind::pageable: p = std::malloc(bytes); break;
        case Kind::pinned: CUDA_CHECK(cudaMallocHost(&p, bytes)); break;
        case Kind::device: CUDA_CHECK(cudaMalloc(&p, bytes)); break;
        case Kind::managed: CUDA_CHECK(cudaMallocManaged(&p, bytes)); break;
    }
    return static_cast<std::uint32_t*>(p);
}

void release(Kind kind, std::uint32_t* p) {
    switch (kind) {
        case Kind::pageable: std::free(p); break;
        case Kind::pinned: CUDA_CHECK(cudaFreeHost(p)); break;
        case Kind::device:
        case Kind::managed: CUDA_CHECK(cudaFree(p)); break;
    }
}

// Device memory is filled and checked by kernels, everything else by the CPU.
void fill(Kind kind, std::uint32_t* p, std::size_t count, std::uint32_t seed) {
    if (kind == Kind::device)
        fill_on_device(p, count, seed);
    else
        fill_on_host(p, count, seed);
}

std::size_t mismatches(Kind kind, const std::uint32_t* p, std::size_t count, std::uint32_t seed) {
    return kind == Kind::device ? mismatches_on_device(p, count, seed)
                                : mismatches_on_host(p, count, seed);
}

}  // namespace

// Child role: copies whose explicit kind contradicts the addresses. They run in a child process
// because what the runtime does with a wrong kind depends on the system: on a UVA system it
// mostly trusts the addresses, elsewhere it could touch device memory from the CPU and crash.
// Prints one line per case and exits 0 when every case behaves as documented for UVA systems.
int child_wrong_kind(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const std::size_t count = 1 << 18;
    const std::size_t bytes = count * sizeof(std::uint32_t);
    std::uint32_t* device_a = allocate(Kind::device, bytes);
    std::uint32_t* device_b = allocate(Kind::device, bytes);
    std::uint32_t* pinned = allocate(Kind::pinned, bytes);
    std::uint32_t* pageable = allocate(Kind::pageable, bytes);
    fill(Kind::device, device_a, count, 11);
    fill(Kind::pinned, pinned, count, 12);
    fill(Kind::pageable, pageable, count, 13);

    struct Case {
        const char* what;
        std::uint32_t* to;
        const std::uint32_t* from;
        cudaMemcpyKind kind;
        std::uint32_t seed;    // the pattern `from` holds
        cudaError_t expected;  // on a system with unified addressing
    };
    const Case cases[] = {
        {"device -> device as cudaMemcpyHostToDevice", device_b, device_a, cudaMemcpyHostToDevice,
         11, cudaSuccess},
        {"pinned -> device as cudaMemcpyDeviceToHost", device_b, pinned, cudaMemcpyDeviceToHost, 12,
         cudaSuccess},
        {"pageable -> device as cudaMemcpyDeviceToDevice", device_b, pageable,
         cudaMemcpyDeviceToDevice, 13, cudaErrorInvalidValue},
        {"device -> device with kind 7 (no such kind)", device_b, device_a,
         static_cast<cudaMemcpyKind>(7), 11, cudaErrorInvalidMemcpyDirection},
    };
    int unexpected = 0;
    for (const Case& c : cases) {
        fill(Kind::device, device_b, count, 99);  // so that a copy that did nothing shows
        const cudaError_t status = cudaMemcpy(c.to, c.from, bytes, c.kind);
        // A failed call also leaves its error behind as the "last error"; clear it, or the launch
        // check after the next kernel would report it as that kernel's failure.
        (void)cudaGetLastError();
        const bool arrived = mismatches(Kind::device, device_b, count, c.seed) == 0;
        const bool as_documented = status == c.expected && arrived == (status == cudaSuccess);
        unexpected += as_documented ? 0 : 1;
        std::printf("%-48s -> %s, data %s%s\n", c.what, cudaGetErrorName(status),
                    arrived ? "copied" : "not copied", as_documented ? "" : "  (UNEXPECTED)");
    }
    release(Kind::device, device_a);
    release(Kind::device, device_b);
    release(Kind::pinned, pinned);
    release(Kind::pageable, pageable);
    return unexpected == 0 ? 0 : 3;
}

tutorial::Result run_memcpy_default(tutorial::Context& ctx) {
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (1 << 20) : (64 << 20));
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::printf(
        "Copying %s with cudaMemcpyDefault between two buffers of every kind: 16 ordered pairs.\n"
        "The source is filled with a known pattern and the destination checked where it lives\n"
        "(kernels for device memory, the CPU otherwise), never through cudaMemcpy itself.\n\n",
        tutorial::format_bytes(bytes).c_str());

    const Kind kinds[] = {Kind::pageable, Kind::pinned, Kind::device, Kind::managed};
    std::vector<tutorial::Column> columns = {{"from \\ to"}};
    for (Kind to : kinds) columns.push_back({kind_name(to)});
    tutorial::Table table(columns);
    int bad_pairs = 0;
    std::uint32_t seed = 1;
    for (Kind from : kinds) {
        std::vector<std::string> row = {kind_name(from)};
        for (Kind to : kinds) {
            std::uint32_t* source = allocate(from, bytes);
            std::uint32_t* destination = allocate(to, bytes);
            fill(from, source, count, seed);
            fill(to, destination, count, ~seed);  // something else, so a skipped copy shows
            CUDA_CHECK(cudaMemcpy(destination, source, bytes, cudaMemcpyDefault));
            const std::size_t wrong = mismatches(to, destination, count, seed);
            bad_pairs += wrong == 0 ? 0 : 1;
            row.push_back(wrong == 0 ? "ok" : tutorial::format("%zu wrong", wrong));
            release(from, source);
            release(to, destination);
            ++seed;
        }
        table.add_row(row);
    }
    table.print();
    std::printf(
        "\nA copy from or to pageable memory cannot be done by the GPU's copy engine directly:\n"
        "the driver first copies it, chunk by chunk, through a pinned staging buffer of its own.\n"
        "Chapter 02 measures what that costs.\n\n");

    std::printf("Now copies whose explicit kind contradicts the addresses, in a child process:\n");
    const tutorial::ChildResult child =
        tutorial::run_child("wrong_kind", {std::to_string(ctx.device)});
    tutorial::print_child_output(child);
    std::printf("The child %s.\n", child.describe().c_str());
    std::printf(
        "\nWith unified addressing the runtime goes by the addresses: a wrong kind between CUDA\n"
        "allocations is silently corrected. It refuses a kind that claims device memory where\n"
        "there is only pageable memory, and a value that is not a kind at all. Without UVA the\n"
        "kind is all the runtime has, so a wrong one copies garbage or crashes: write\n"
        "cudaMemcpyDefault and let the addresses speak.\n");
    const bool wrong_kinds_ok = child.exited && child.exit_code == 0;
    return ctx.verdict(bad_pairs == 0 && wrong_kinds_ok,
                       tutorial::format("%d of 16 cudaMemcpyDefault pairs verified; all 4 "
                                        "wrong-kind copies behaved as documented for UVA",
                                        16 - bad_pairs));
}
