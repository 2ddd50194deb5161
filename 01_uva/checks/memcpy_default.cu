// Checks of section memcpy_default: runs ../memcpy_default.cu's walkthrough (16 copies) and prints
// them as a table; runs its wrong kinds in a child process (on another system a wrong kind could
// crash it); states the lesson as claims.
#include "01_uva/memcpy_default.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// The kinds' names, in the walkthrough's order.
constexpr const char* kind_names[kinds] = {"pageable", "pinned", "device", "managed"};

// Child role: the lesson's copies whose explicit kind contradicts the addresses. They run in
// a child process because what the runtime does with a wrong kind depends on the system: on a UVA
// system it mostly trusts the addresses, elsewhere it could touch device memory from the CPU and
// crash (then the child's exit says so, and none of its lines are printed). Prints one line per
// case and exits 0. The documentation leaves every one of them open: a kind that contradicts the
// addresses is undefined, and for a value that is no cudaMemcpyKind the cudaMemcpy entry says
// only that kind must be one of them (the caller's duty), naming no outcome. What this driver
// does with each is printed, and not judged.
int child_wrong_kind(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    for (const KindTried& t : copy_with_wrong_kinds(1 << 18)) {
        const bool no_such_kind = t.kind < cudaMemcpyHostToHost || t.kind > cudaMemcpyDefault;
        std::printf("%-48s -> %s, data %s%s\n", t.what, cudaGetErrorName(t.status),
                    t.arrived ? "copied" : "not copied",
                    no_such_kind ? "  (no cudaMemcpyKind: what this driver did)"
                                 : "  (undefined: what this driver did)");
    }
    return 0;
}

namespace {

// What the child's copy `call` did, in words, from its line "<call> -> <error>, data copied
// ...": "copied", "was refused (cudaErrorX)", or why there is no answer.
std::string what_it_did(const tutorial::ChildResult& child, const char* call) {
    const std::string answer = tutorial::child_answer(child, call);
    const std::string status = answer.substr(0, answer.find(','));
    if (status.rfind("cuda", 0) != 0) return "gave no answer (the child " + child.describe() + ")";
    const bool copied = answer.find(", data copied") != std::string::npos;
    if (status == "cudaSuccess") return copied ? "copied" : "returned cudaSuccess, copying nothing";
    return copied ? "copied, yet returned " + status : "was refused (" + status + ")";
}

}  // namespace

tutorial::Result run_memcpy_default(tutorial::Context& ctx) {
    // The cudaMemcpy entry allows cudaMemcpyDefault only on systems with unified virtual
    // addressing: elsewhere the lesson has nothing to show.
    if (tutorial::device_attribute(ctx.device, cudaDevAttrUnifiedAddressing) != 1)
        return ctx.skip("unifiedAddressing is 0: cudaMemcpyDefault needs unified addressing");
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (1 << 20) : (64 << 20));
    std::printf(
        "Copying %s with cudaMemcpyDefault between two buffers of every kind: 16 ordered pairs.\n"
        "The source is filled with a known pattern and the destination checked where it lives\n"
        "(kernels for device memory, the CPU otherwise), never through cudaMemcpy itself.\n\n",
        tutorial::format_bytes(bytes).c_str());

    const Found pairs = walkthrough(bytes);
    std::vector<tutorial::Column> columns = {{"from \\ to"}};
    for (const char* to : kind_names) columns.push_back({to});
    tutorial::Table table(columns);
    int bad_pairs = 0;
    for (int from = 0; from < kinds; ++from) {
        std::vector<std::string> row = {kind_names[from]};
        for (int to = 0; to < kinds; ++to) {
            const std::size_t wrong = pairs.wrong[from][to];
            bad_pairs += wrong == 0 ? 0 : 1;
            row.push_back(wrong == 0 ? "ok" : tutorial::format("%zu wrong", wrong));
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
        "\nThe Runtime API reference (cudaMemcpy) says kind must be one of the cudaMemcpyKind\n"
        "values, and names no outcome for a value that is none. A kind that contradicts the\n"
        "addresses is undefined behaviour. Observed on %s: device -> device as HostToDevice %s;\n"
        "pinned -> device as DeviceToHost %s; pageable -> device as DeviceToDevice %s.\n"
        "No program may rely on any of it; another driver may do otherwise. Without UVA the kind\n"
        "is all the runtime has, so a wrong one copies garbage or crashes: write\n"
        "cudaMemcpyDefault.\n\n",
        tutorial::this_driver().c_str(),
        what_it_did(child, "device -> device as cudaMemcpyHostToDevice").c_str(),
        what_it_did(child, "pinned -> device as cudaMemcpyDeviceToHost").c_str(),
        what_it_did(child, "pageable -> device as cudaMemcpyDeviceToDevice").c_str());
    // The cudaMemcpy entry: with cudaMemcpyDefault the type of transfer is inferred from the
    // pointer values, for any pair of them (host to host included), on a system that supports
    // unified virtual addressing (the only one where the entry allows cudaMemcpyDefault).
    ctx.claim(tutorial::documented(
        "default_finds_direction",
        "cudaMemcpyDefault finds the direction from the addresses for all 16 pairs of kinds",
        bad_pairs == 0, tutorial::format("%d of 16 pairs arrived intact", 16 - bad_pairs),
        "the runtime took a pair's kinds for others, although the addresses tell them apart",
        tutorial::Entry{"Runtime API reference: cudaMemcpy",
                        "cudaMemcpyDefault type of transfer pointer values", "is inferred"}));
    // The child's line for kind 7 reads "<call> -> <error>, data ...": the error is the answer.
    const std::string no_such_kind = tutorial::child_answer(child, "kind 7 (no such kind)");
    const std::string returned = no_such_kind.substr(0, no_such_kind.find(','));
    // The cudaMemcpy entry puts a duty on the caller (kind must be one of the cudaMemcpyKind
    // values) and lists cudaErrorInvalidMemcpyDirection among its returns without saying for
    // which case; that code's own entry speaks of "the API call", naming no function. What this
    // driver returns for a value that is no kind is observed, and the verdict rests on the 16
    // copies alone.
    ctx.claim(tutorial::observed(
        "no_such_kind_refused",
        "a value that is no cudaMemcpyKind is refused with cudaErrorInvalidMemcpyDirection",
        returned == "cudaErrorInvalidMemcpyDirection", "returned " + returned,
        "the cudaMemcpy entry says kind must be one of the cudaMemcpyKind values, a duty on the "
        "caller, and names no outcome for a value that is none"));
    return ctx.verdict(bad_pairs == 0, tutorial::format("%d of 16 cudaMemcpyDefault pairs verified",
                                                        16 - bad_pairs));
}

TUTORIAL_SECTION(memcpy_default, run_memcpy_default);
TUTORIAL_CHILD(wrong_kind, child_wrong_kind);
