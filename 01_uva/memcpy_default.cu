// Section `memcpy_default`: under UVA, cudaMemcpyDefault works out the direction of every copy
// from the two addresses. An explicit kind that contradicts them is undefined behaviour by the
// cudaMemcpy entry (what happens is this driver's choice); only a value that is no kind at all
// has a documented error (cudaErrorInvalidMemcpyDirection).
#include "common/check.hpp"
#include "common/harness/child.hpp"
#include "common/patterns.hpp"
#include "common/harness/report.hpp"
#include "common/harness/chapter.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using tutorial::Buffer;
using tutorial::MemoryKind;

namespace {

// lesson:begin
// With unified addressing the runtime tells from the two addresses where each buffer lives, so
// one kind serves every direction: host to device, device to host, device to device, host to host.
void copy(void* destination, const void* source, std::size_t bytes) {
    CUDA_CHECK(cudaMemcpy(destination, source, bytes, cudaMemcpyDefault));
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

}  // namespace

// Child role: copies whose explicit kind contradicts the addresses. They run in a child process
// because what the runtime does with a wrong kind depends on the system: on a UVA system it
// mostly trusts the addresses, elsewhere it could touch device memory from the CPU and crash.
// Prints one line per case and exits 0 when the refusal the runtime documents happened (a value
// that is no cudaMemcpyKind). The documentation leaves a kind that contradicts the addresses
// undefined: what this driver does with those is printed, and not judged.
int child_wrong_kind(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    const std::size_t count = 1 << 18;
    const std::size_t bytes = count * sizeof(std::uint32_t);
    const Buffer device_a(MemoryKind::device, bytes);
    const Buffer device_b(MemoryKind::device, bytes);
    const Buffer pinned(MemoryKind::pinned, bytes);
    const Buffer pageable(MemoryKind::pageable, bytes);
    fill(device_a, count, 11);
    fill(pinned, count, 12);
    fill(pageable, count, 13);

    struct Case {
        const char* what;
        void* to;
        const void* from;
        cudaMemcpyKind kind;
        std::uint32_t seed;    // the pattern `from` holds
        cudaError_t expected;  // on a system with unified addressing
        bool defined;          // false: the documentation promises nothing for this call
    };
    const Case cases[] = {
        {"device -> device as cudaMemcpyHostToDevice", device_b.get(), device_a.get(),
         cudaMemcpyHostToDevice, 11, cudaSuccess, false},
        {"pinned -> device as cudaMemcpyDeviceToHost", device_b.get(), pinned.get(),
         cudaMemcpyDeviceToHost, 12, cudaSuccess, false},
        {"pageable -> device as cudaMemcpyDeviceToDevice", device_b.get(), pageable.get(),
         cudaMemcpyDeviceToDevice, 13, cudaErrorInvalidValue, false},
        {"device -> device with kind 7 (no such kind)", device_b.get(), device_a.get(),
         static_cast<cudaMemcpyKind>(7), 11, cudaErrorInvalidMemcpyDirection, true},
    };
    int unexpected = 0;
    for (const Case& c : cases) {
        fill(device_b, count, 99);  // so that a copy that did nothing shows
        const cudaError_t status = cudaMemcpy(c.to, c.from, bytes, c.kind);
        // A failed call also leaves its error behind as the "last error"; clear it, or the launch
        // check after the next kernel would report it as that kernel's failure.
        (void)cudaGetLastError();
        const bool arrived = mismatches(device_b, count, c.seed) == 0;
        const bool as_documented = status == c.expected && arrived == (status == cudaSuccess);
        unexpected += c.defined && !as_documented ? 1 : 0;
        std::printf("%-48s -> %s, data %s%s\n", c.what, cudaGetErrorName(status),
                    arrived ? "copied" : "not copied",
                    !c.defined      ? "  (undefined: what this driver did)"
                    : as_documented ? "  (refused, as documented)"
                                    : "  (UNEXPECTED)");
    }
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

    const MemoryKind kinds[] = {MemoryKind::pageable, MemoryKind::pinned, MemoryKind::device,
                                MemoryKind::managed};
    std::vector<tutorial::Column> columns = {{"from \\ to"}};
    for (MemoryKind to : kinds) columns.push_back({tutorial::kind_name(to)});
    tutorial::Table table(columns);
    int bad_pairs = 0;
    std::uint32_t seed = 1;
    for (MemoryKind from : kinds) {
        std::vector<std::string> row = {tutorial::kind_name(from)};
        for (MemoryKind to : kinds) {
            const Buffer source(from, bytes);
            const Buffer destination(to, bytes);
            fill(source, count, seed);
            fill(destination, count, ~seed);  // something else, so a skipped copy shows
            copy(destination.get(), source.get(), bytes);
            const std::size_t wrong = mismatches(destination, count, seed);
            bad_pairs += wrong == 0 ? 0 : 1;
            row.push_back(wrong == 0 ? "ok" : tutorial::format("%zu wrong", wrong));
            ++seed;
        }
        table.add_row(row);
    }
    table.print();
    std::printf(
        "\nBetween pageable memory and the GPU the copy engine cannot work directly: the driver\n"
        "copies chunk by chunk through a pinned staging buffer of its own (chapter 02 measures\n"
        "what that costs). Copies between two host buffers involve no GPU at all.\n\n");

    std::printf("Now copies whose explicit kind contradicts the addresses, in a child process:\n");
    const tutorial::ChildResult child =
        tutorial::run_child("wrong_kind", {std::to_string(ctx.device)});
    tutorial::print_child_output(child);
    std::printf("The child %s.\n", child.describe().c_str());
    std::printf(
        "\nThe Runtime API reference (cudaMemcpy) documents one refusal: a value that is no\n"
        "cudaMemcpyKind (cudaErrorInvalidMemcpyDirection). A kind that contradicts the addresses\n"
        "is undefined behaviour: this driver copied anyway between two CUDA allocations and\n"
        "refused pageable memory named as device memory (observed on %s), but no program\n"
        "may rely on either; another driver may do otherwise. Without UVA the kind is all the\n"
        "runtime has, so a wrong one copies garbage or crashes: write cudaMemcpyDefault.\n\n",
        tutorial::this_driver().c_str());
    ctx.claim(tutorial::documented(
        "cudaMemcpyDefault finds the direction from the addresses for all 16 pairs of kinds",
        bad_pairs == 0, tutorial::format("%d of 16 pairs arrived intact", 16 - bad_pairs),
        "this system has no unified addressing, so the runtime cannot tell the kinds apart",
        "Runtime API reference: cudaMemcpy (cudaMemcpyDefault infers the direction from the "
        "pointer values); Programming Guide, Unified Virtual Address Space"));
    // The child's line for kind 7 reads "<call> -> <error>, data ...": the error is the answer.
    const std::string no_such_kind = tutorial::child_answer(child, "kind 7 (no such kind)");
    const std::string returned = no_such_kind.substr(0, no_such_kind.find(','));
    ctx.claim(tutorial::documented_error(
        "a value that is no cudaMemcpyKind is refused with cudaErrorInvalidMemcpyDirection",
        returned, "cudaErrorInvalidMemcpyDirection",
        "this runtime treats an invalid kind differently; the child's lines say how",
        "Runtime API reference: cudaMemcpy (the kind must be a cudaMemcpyKind)"));
    return ctx.verdict(bad_pairs == 0 && returned == "cudaErrorInvalidMemcpyDirection",
                       tutorial::format("%d of 16 cudaMemcpyDefault pairs verified; a kind that "
                                        "is none refused with %s",
                                        16 - bad_pairs, returned.c_str()));
}

TUTORIAL_SECTION(memcpy_default, run_memcpy_default);
TUTORIAL_CHILD(wrong_kind, child_wrong_kind);
