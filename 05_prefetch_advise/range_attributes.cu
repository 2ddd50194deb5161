// Section `range_attributes`: what cudaMemRangeGetAttribute(s) report after each advice, unset and
// prefetch, and the page rounding that applies advice given on a few bytes to whole pages. Each
// row is marked with what it rests on: the cudaMemRangeGetAttribute and cudaMemAdvise entries
// define every value except one, how the host appears in the AccessedBy list, which the entry
// leaves open (it promises device ids); that row shows what this driver did.
#include "common/check.hpp"
#include "common/harness/report.hpp"
#include "helpers/managed.hpp"
#include "common/harness/chapter.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;

namespace {

// lesson:begin
// The attributes that answer with one int: a flag, or a device ordinal with cudaCpuDeviceId (-1)
// for the host and cudaInvalidDeviceId (-2) for none.
int int_attribute(const void* data, std::size_t bytes, cudaMemRangeAttribute attribute) {
    int value = 0;
    CUDA_CHECK(cudaMemRangeGetAttribute(&value, sizeof value, attribute, data, bytes));
    return value;
}

// The CUDA 13 form of a location attribute: its Type and Id, fetched in one call with the
// plural cudaMemRangeGetAttributes.
std::string get_location(const void* data, std::size_t bytes, cudaMemRangeAttribute type_attribute,
                         cudaMemRangeAttribute id_attribute) {
    int type = -1;
    int id = -1;
    void* values[] = {&type, &id};
    std::size_t sizes[] = {sizeof type, sizeof id};
    cudaMemRangeAttribute attributes[] = {type_attribute, id_attribute};
    CUDA_CHECK(cudaMemRangeGetAttributes(values, sizes, attributes, 2, data, bytes));
    const char* name = type == cudaMemLocationTypeDevice    ? "Device"
                       : type == cudaMemLocationTypeHost    ? "Host"
                       : type == cudaMemLocationTypeInvalid ? "Invalid"
                                                            : "other";
    return type == cudaMemLocationTypeDevice ? format("%s %d", name, id) : name;
}

// Who has AccessedBy set on the whole range, sorted: the attribute fills an int per slot with the
// device ids and pads the slots left over with cudaInvalidDeviceId. The entry speaks of device
// ids only; where the host has the advice, driver 580 lists it as cudaCpuDeviceId (-1).
std::vector<int> accessed_by(const void* data, std::size_t bytes) {
    std::vector<int> list(8, 0);
    CUDA_CHECK(cudaMemRangeGetAttribute(list.data(), list.size() * sizeof(int),
                                        cudaMemRangeAttributeAccessedBy, data, bytes));
    list.erase(std::remove(list.begin(), list.end(), cudaInvalidDeviceId), list.end());
    std::sort(list.begin(), list.end());
    return list;
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above: each advice and prefetch
// in turn, and the attributes read back after it. ----

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
void check_accessed_by(Checks& c, const std::string& after, const void* data, std::size_t bytes,
                       const std::vector<int>& gpus, const std::vector<int>& others) {
    const std::vector<int> list = accessed_by(data, bytes);
    std::vector<int> listed_gpus, listed_others;
    for (int id : list) (id >= 0 ? listed_gpus : listed_others).push_back(id);
    c.check(after, "AccessedBy, GPUs", braces(listed_gpus), braces(gpus));
    c.check(after, "AccessedBy, the host", braces(listed_others), braces(others), Kind::observed);
}

std::string preferred(const void* data, std::size_t bytes) {
    return get_location(data, bytes, cudaMemRangeAttributePreferredLocationType,
                        cudaMemRangeAttributePreferredLocationId);
}

std::string last_prefetch(const void* data, std::size_t bytes) {
    return get_location(data, bytes, cudaMemRangeAttributeLastPrefetchLocationType,
                        cudaMemRangeAttributeLastPrefetchLocationId);
}

// Set and unset each advice in turn; after each call, the attributes it changes.
void check_advice(Checks& c, char* data, std::size_t bytes, int d) {
    const cudaMemLocation gpu = gpu_location(d);
    const cudaMemLocation host = host_location();
    const auto read_mostly = [&] {
        return int_attribute(data, bytes, cudaMemRangeAttributeReadMostly);
    };
    const auto preferred_int = [&] {
        return int_attribute(data, bytes, cudaMemRangeAttributePreferredLocation);
    };
    c.check("allocation", "ReadMostly", read_mostly(), 0);
    c.check("allocation", "PreferredLocation", preferred_int(), -2);
    c.check("allocation", "LastPrefetchLocation",
            int_attribute(data, bytes, cudaMemRangeAttributeLastPrefetchLocation), -2);

    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetReadMostly, gpu));
    c.check("SetReadMostly", "ReadMostly", read_mostly(), 1);
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseUnsetReadMostly, gpu));
    c.check("UnsetReadMostly", "ReadMostly", read_mostly(), 0);

    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetPreferredLocation, gpu));
    c.check("SetPreferredLocation(GPU)", "PreferredLocation", preferred_int(), d);
    c.check("SetPreferredLocation(GPU)", "PreferredLocationType/Id", preferred(data, bytes),
            format("Device %d", d));
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetPreferredLocation, host));
    c.check("SetPreferredLocation(host)", "PreferredLocation", preferred_int(), -1);
    c.check("SetPreferredLocation(host)", "PreferredLocationType/Id", preferred(data, bytes),
            "Host");
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseUnsetPreferredLocation, host));
    c.check("UnsetPreferredLocation", "PreferredLocation", preferred_int(), -2);
    c.check("UnsetPreferredLocation", "PreferredLocationType/Id", preferred(data, bytes),
            "Invalid");

    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetAccessedBy, gpu));
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetAccessedBy, host));
    check_accessed_by(c, "SetAccessedBy(GPU), (host)", data, bytes, {d}, {cudaCpuDeviceId});
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseUnsetAccessedBy, gpu));
    check_accessed_by(c, "UnsetAccessedBy(GPU)", data, bytes, {}, {cudaCpuDeviceId});
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseUnsetAccessedBy, host));
    check_accessed_by(c, "UnsetAccessedBy(host)", data, bytes, {}, {});
}

// A prefetch to each side; the attribute names where the last one was asked to go.
void check_prefetches(Checks& c, char* data, std::size_t bytes, int d) {
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu_location(d), 0, nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());
    c.check("prefetch to GPU", "LastPrefetchLocation",
            int_attribute(data, bytes, cudaMemRangeAttributeLastPrefetchLocation), d);
    c.check("prefetch to GPU", "LastPrefetchLocationType/Id", last_prefetch(data, bytes),
            format("Device %d", d));
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, host_location(), 0, nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());
    c.check("prefetch to host", "LastPrefetchLocation",
            int_attribute(data, bytes, cudaMemRangeAttributeLastPrefetchLocation), -1);
    c.check("prefetch to host", "LastPrefetchLocationType/Id", last_prefetch(data, bytes), "Host");
}

}  // namespace

tutorial::Result run_range_attributes(tutorial::Context& ctx) {
    if (const char* why = why_no_gpu_prefetch(ctx.device); *why) return ctx.skip(why);
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = 64 * page;
    char* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    Checks checks;
    check_advice(checks, data, bytes, ctx.device);
    check_prefetches(checks, data, bytes, ctx.device);
    const int advice_mismatches = checks.documented_mismatches();

    // Page rounding: advice on 16 bytes covers the whole page they are on, and only that page.
    CUDA_CHECK(cudaMemAdvise(data, 16, cudaMemAdviseSetReadMostly, gpu_location(ctx.device)));
    checks.check("SetReadMostly on bytes 0-15", "ReadMostly at byte 1024",
                 int_attribute(data + 1024, 4, cudaMemRangeAttributeReadMostly), 1);
    checks.check("SetReadMostly on bytes 0-15", format("ReadMostly at byte %zu", page),
                 int_attribute(data + page, 4, cudaMemRangeAttributeReadMostly), 0);
    CUDA_CHECK(cudaFree(data));

    checks.print();
    std::printf(
        "\nThe int forms use cudaCpuDeviceId (-1) for the host and cudaInvalidDeviceId (-2) for\n"
        "\"none\", as the cudaMemRangeGetAttribute entry defines them; the CUDA 13 Type/Id forms\n"
        "name the location kind. For AccessedBy the entry promises a list of device ids: the\n"
        "GPUs' rows are documented; how the host appears there is what %s chose (observed).\n"
        "Advice and prefetches apply to whole CPU pages (%zu bytes here), as the cudaMemAdvise\n"
        "and cudaMemPrefetchAsync entries say: 16 bytes of advice covered byte 1024 of the same\n"
        "page but not the next page.\n",
        tutorial::this_driver().c_str(), page);
    const int rounding_mismatches = checks.documented_mismatches() - advice_mismatches;
    std::printf("\n");
    ctx.claim(tutorial::documented(
        "the range attributes report each advice and prefetch as set, and unset clears it",
        advice_mismatches == 0, format("%d attribute(s) differed", advice_mismatches),
        "the driver reports a value in another form than the entry describes; the NO rows show "
        "which",
        "Runtime API reference: cudaMemRangeGetAttribute"));
    ctx.claim(tutorial::observed(
        "AccessedBy lists the host as cudaCpuDeviceId (-1) while it has the advice, and not after",
        checks.observed_mismatches() == 0,
        format("%d of 3 rows as expected", 3 - checks.observed_mismatches()),
        "the cudaMemRangeGetAttribute entry says AccessedBy returns a list of device ids, and "
        "does not say how the host appears in it"));
    ctx.claim(tutorial::documented(
        "advice on 16 bytes covers their whole page, and only that page", rounding_mismatches == 0,
        format("byte 1024 read mostly, byte %zu not: %d mismatch(es)", page, rounding_mismatches),
        "the advice was applied to more or less than the CPU page the bytes are on",
        "Runtime API reference: cudaMemAdvise"));
    return ctx.verdict(checks.documented_mismatches() == 0,
                       format("every attribute the reference defines equals what was set (%d "
                              "mismatches)",
                              checks.documented_mismatches()));
}

TUTORIAL_SECTION(range_attributes, run_range_attributes);
