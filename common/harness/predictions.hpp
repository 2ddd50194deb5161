// The report every chapter's `properties` section makes: each device property, the behaviour it
// predicts, what the section saw when it tried that behaviour, and one CLAIM line each.
#pragma once

#include "common/harness/chapter.hpp"

#include <functional>
#include <string>
#include <vector>

namespace tutorial {

// A device property and the behaviour it predicts, checked by doing it: canMapHostMemory = 1
// predicts that a kernel can write through a mapped host pointer, so the section has a kernel try.
struct Prediction {
    std::string property;  // "canMapHostMemory"
    int value;             // what the device reports for it
    std::string predicts;  // the behaviour this value predicts, in words
    bool came_true;        // what the section observed agrees with the prediction
    std::string seen;      // what the section observed, in words
    // documented (the default): `where` names the entry that ties the value to the behaviour;
    // observed: what this driver did where the reference promises nothing, `where` says why;
    // timing: a measured prediction, not judged under compute-sanitizer.
    Evidence evidence = Evidence::documented;
    // observed: what the reference leaves open (the form before Entry: documented's `where`).
    std::string where = "Runtime API reference: cudaDeviceAttr";
    // documented: the entry that ties the value to the behaviour, in its own terms (claim.hpp).
    Entry entry = {};
    // timing: tries the behaviour again with fresh rounds, for a prediction that fell short
    // (Claim::again); whether it came true this time.
    std::function<bool()> again = {};
};
// Each prediction's claim is named after its property: canMapHostMemory -> can_map_host_memory.

// The report every chapter's `properties` section makes: the device's name, a table of the
// properties, what each predicts and what was seen, one CLAIM line per prediction, `conclusion`
// (what the values mean for this chapter), and the verdict.
Result check_predictions(Context& ctx, const std::vector<Prediction>& predictions,
                         const std::string& conclusion = "");

}  // namespace tutorial
