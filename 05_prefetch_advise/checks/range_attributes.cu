// Checks of section range_attributes: runs ../range_attributes.cu's walkthrough and sets every
// attribute it read back next to what it must be, each row marked with what it rests on. The
// cudaMemRangeGetAttribute and cudaMemAdvise entries define every value except one, how the host
// appears in the AccessedBy list, which the entry leaves open (it promises device ids); that row
// shows what this driver did.
#include "05_prefetch_advise/range_attributes.cu"

#include "../helpers/managed.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <cstdio>

using tutorial::format;

namespace {

// What a row rests on: a value the reference defines, or what this driver did where it does not.
enum class Kind { documented, observed };

// Each reported attribute next to what it must be after the step, as a table row; mismatches are
// counted apart for the documented and the observed rows.
class Checks {
public:
    void check(const std::string& after, const std::string& attribute, const std::string& reported,
               const std::string& expected, Kind kind = Kind::documented) {
        const bool ok = reported == expected;
        (kind == Kind::documented ? documented_mismatches_ : observed_mismatches_) += ok ? 0 : 1;
        table_.add_row({after, attribute, reported, expected, ok ? "yes" : "NO",
                        kind == Kind::documented ? "documented" : "observed"});
    }
    void check(const std::string& after, const std::string& attribute, int reported, int expected) {
        check(after, attribute, std::to_string(reported), std::to_string(expected));
    }
    void print() const { table_.print(); }
    int documented_mismatches() const { return documented_mismatches_; }
    int observed_mismatches() const { return observed_mismatches_; }

private:
    tutorial::Table table_{
        {{"after"}, {"attribute"}, {"reported"}, {"expected"}, {"ok"}, {"the value is"}}};
    int documented_mismatches_ = 0;
    int observed_mismatches_ = 0;
};

// A list of ints as {a,b}.
std::string braces(const std::vector<int>& list) {
    std::string text;
    for (int d : list) text += (text.empty() ? "" : ",") + std::to_string(d);
    return "{" + text + "}";
}

// The AccessedBy list in two rows: the GPUs (device ids, as the entry promises) and whatever
// else it holds (the host, in the form this driver chose).
void check_accessed_by(Checks& c, const std::string& after, const std::vector<int>& list,
                       const std::vector<int>& gpus, const std::vector<int>& others) {
    std::vector<int> listed_gpus, listed_others;
    for (int id : list) (id >= 0 ? listed_gpus : listed_others).push_back(id);
    c.check(after, "AccessedBy, GPUs", braces(listed_gpus), braces(gpus));
    c.check(after, "AccessedBy, the host", braces(listed_others), braces(others), Kind::observed);
}

// Each attribute the walkthrough read, against what the entries define.
void check_advice(Checks& c, const Found& f, int d) {
    c.check("allocation", "ReadMostly", f.read_mostly, 0);
    c.check("allocation", "PreferredLocation", f.preferred, -2);
    c.check("allocation", "LastPrefetchLocation", f.last_prefetch, -2);
    c.check("SetReadMostly", "ReadMostly", f.read_mostly_steps.set, 1);
    c.check("UnsetReadMostly", "ReadMostly", f.read_mostly_steps.unset, 0);
    const PreferredSteps& p = f.preferred_steps;
    c.check("SetPreferredLocation(GPU)", "PreferredLocation", p.gpu.as_int, d);
    c.check("SetPreferredLocation(GPU)", "PreferredLocationType/Id", p.gpu.type_id,
            format("Device %d", d));
    c.check("SetPreferredLocation(host)", "PreferredLocation", p.host.as_int, -1);
    c.check("SetPreferredLocation(host)", "PreferredLocationType/Id", p.host.type_id, "Host");
    c.check("UnsetPreferredLocation", "PreferredLocation", p.unset.as_int, -2);
    c.check("UnsetPreferredLocation", "PreferredLocationType/Id", p.unset.type_id, "Invalid");
    const AccessedBySteps& a = f.accessed_by_steps;
    check_accessed_by(c, "SetAccessedBy(GPU), (host)", a.both, {d}, {cudaCpuDeviceId});
    check_accessed_by(c, "UnsetAccessedBy(GPU)", a.host_only, {}, {cudaCpuDeviceId});
    check_accessed_by(c, "UnsetAccessedBy(host)", a.none, {}, {});
    const PrefetchSteps& pf = f.prefetch_steps;
    c.check("prefetch to GPU", "LastPrefetchLocation", pf.to_gpu.as_int, d);
    c.check("prefetch to GPU", "LastPrefetchLocationType/Id", pf.to_gpu.type_id,
            format("Device %d", d));
    c.check("prefetch to host", "LastPrefetchLocation", pf.to_host.as_int, -1);
    c.check("prefetch to host", "LastPrefetchLocationType/Id", pf.to_host.type_id, "Host");
}

}  // namespace

tutorial::Result run_range_attributes(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    const Found f = walkthrough(ctx.device);
    Checks checks;
    check_advice(checks, f, ctx.device);
    const int advice_mismatches = checks.documented_mismatches();
    // Page rounding: advice on 16 bytes covers the whole page they are on, and only that page.
    checks.check("SetReadMostly on bytes 0-15", "ReadMostly at byte 1024", f.rounding.same_page, 1);
    checks.check("SetReadMostly on bytes 0-15", format("ReadMostly at byte %zu", f.page),
                 f.rounding.next_page, 0);
    const int rounding_mismatches = checks.documented_mismatches() - advice_mismatches;
    checks.print();
    std::printf(
        "\nThe int forms use cudaCpuDeviceId (-1) for the host and cudaInvalidDeviceId (-2) for\n"
        "\"none\", as the cudaMemRangeGetAttribute entry defines them; the CUDA 13 Type/Id forms\n"
        "name the location kind. For AccessedBy the entry promises a list of device ids: the\n"
        "GPUs' rows are documented; how the host appears there is what %s chose (observed).\n"
        "Advice and prefetches apply to whole CPU pages (%zu bytes here), as the cudaMemAdvise\n"
        "and cudaMemPrefetchAsync entries say: 16 bytes of advice covered byte 1024 of the same\n"
        "page but not the next page.\n\n",
        tutorial::this_driver().c_str(), f.page);
    ctx.claim(tutorial::documented(
        "attributes_as_set",
        "the range attributes report each advice and prefetch as set, and unset clears it",
        advice_mismatches == 0, format("%d attribute(s) differed", advice_mismatches),
        "the driver reports a value in another form than the entry describes; the NO rows show "
        "which",
        tutorial::Entry{"Runtime API reference: cudaMemRangeGetAttribute",
                        "cudaMemLocationTypeDevice cudaMemLocationTypeHost "
                        "cudaMemLocationTypeInvalid",
                        "will"}));
    ctx.claim(tutorial::observed(
        "host_as_cpu_device_id",
        "AccessedBy lists the host as cudaCpuDeviceId (-1) while it has the advice, and not after",
        checks.observed_mismatches() == 0,
        format("%d of 3 rows as expected", 3 - checks.observed_mismatches()),
        "the cudaMemRangeGetAttribute entry says AccessedBy returns a list of device ids, and "
        "does not say how the host appears in it"));
    // The cudaMemAdvise entry: the start and the end of the range "will be rounded down and
    // rounded up respectively to be aligned to CPU page size before the advice is applied".
    ctx.claim(tutorial::documented(
        "advice_covers_page",
        "advice on 16 bytes covers their whole page, and only that page", rounding_mismatches == 0,
        format("byte 1024 read mostly, byte %zu not: %d mismatch(es)", f.page,
               rounding_mismatches),
        "the advice was applied to more or less than the CPU page the bytes are on",
        tutorial::Entry{"Runtime API reference: cudaMemAdvise", "rounded aligned", "will"}));
    return ctx.verdict(checks.documented_mismatches() == 0,
                       format("every attribute the reference defines equals what was set (%d "
                              "mismatches)",
                              checks.documented_mismatches()));
}

TUTORIAL_SECTION(range_attributes, run_range_attributes);
