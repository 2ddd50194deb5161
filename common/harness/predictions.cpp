#include "common/harness/predictions.hpp"

#include "common/check.hpp"
#include "common/harness/claim.hpp"
#include "common/harness/report.hpp"

#include <cuda_runtime.h>

#include <cctype>
#include <cstdio>

namespace tutorial {

Result check_predictions(Context& ctx, const std::vector<Prediction>& predictions,
                         const std::string& conclusion) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx.device));
    std::printf(
        "Device %d, %s (compute capability %d.%d). Each property predicts a behaviour; the\n"
        "section tries the behaviour and compares.\n\n",
        ctx.device, prop.name, prop.major, prop.minor);
    Table table({{"property"}, {"value", Align::right}, {"predicts"}, {"seen"}});
    for (const Prediction& p : predictions)
        table.add_row({p.property, std::to_string(p.value), p.predicts, p.seen});
    table.print();
    std::printf("\n");
    int held = 0;
    for (const Prediction& p : predictions) {
        const std::string statement =
            p.property + " = " + std::to_string(p.value) + " predicts: " + p.predicts;
        const std::string if_not =
            "the property and the behaviour disagree: a driver or system setting (a virtual "
            "machine, MPS, a restricted container) may limit what the device reports it can do";
        // canMapHostMemory -> can_map_host_memory: the claim's identifier in the tests.
        std::string id;
        const bool all_caps = p.property.find_first_of("abcdefghijklmnopqrstuvwxyz") ==
                              std::string::npos;
        for (const char c : p.property) {
            if (all_caps) {  // VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED -> virtual_memory_...
                id += std::isalnum(static_cast<unsigned char>(c))
                          ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                          : '_';
                continue;
            }
            if (std::isupper(static_cast<unsigned char>(c))) {
                if (!id.empty()) id += '_';
                id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            } else if (std::isalnum(static_cast<unsigned char>(c))) {
                id += c;
            } else if (!id.empty() && id.back() != '_') {
                id += '_';
            }
        }
        const Entry entry = p.entry.where.empty() ? Entry{p.where, "", ""} : p.entry;
        Claim claim = p.evidence == Evidence::observed
                          ? observed(id, statement, p.came_true, p.seen, p.where)
                          : documented(id, statement, p.came_true, p.seen, if_not, entry);
        if (p.evidence == Evidence::timing) {
            claim.evidence = Evidence::timing;
            if (p.again) claim.measure_again = [&p] { return p.again() ? 1.0 : 0.0; };
        }
        held += ctx.claim(claim) ? 1 : 0;
    }
    if (!conclusion.empty()) std::printf("\n%s\n", conclusion.c_str());
    return ctx.verdict(held == static_cast<int>(predictions.size()),
                       format("%d of %zu properties predicted what the device did (or could not "
                              "be judged)",
                              held, predictions.size()));
}

}  // namespace tutorial
