// Section `range_attributes`: what cudaMemRangeGetAttribute(s) report after each advice, unset and
// prefetch, and the page rounding that applies advice given on a few bytes to whole pages.
#include "common/check.hpp"
#include "common/report.hpp"
#include "helpers/managed.hpp"
#include "sections.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;

namespace {

// lesson:begin
// The attributes that answer with one int (a flag, or a device ordinal with -1 for the host and
// -2 for none).
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

// The devices with AccessedBy set, sorted: the attribute fills an int per possible entry and
// pads with cudaInvalidDeviceId.
std::string accessed_by(const void* data, std::size_t bytes) {
    std::vector<int> list(8, 0);
    CUDA_CHECK(cudaMemRangeGetAttribute(list.data(), list.size() * sizeof(int),
                                        cudaMemRangeAttributeAccessedBy, data, bytes));
    list.erase(std::remove(list.begin(), list.end(), cudaInvalidDeviceId), list.end());
    std::sort(list.begin(), list.end());
    std::string text;
    for (int d : list) text += (text.empty() ? "" : ",") + std::to_string(d);
    return "{" + text + "}";
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above: each advice and prefetch
// in turn, and the attributes read back after it. ----

// Each reported attribute next to what it must be after the step, as a table row.
class Checks {
public:
    void check(const std::string& after, const std::string& attribute, const std::string& reported,
               const std::string& expected) {
        const bool ok = reported == expected;
        mismatches_ += ok ? 0 : 1;
        table_.add_row({after, attribute, reported, expected, ok ? "yes" : "NO"});
    }
    void check(const std::string& after, const std::string& attribute, int reported, int expected) {
        check(after, attribute, std::to_string(reported), std::to_string(expected));
    }
    void print() const { table_.print(); }
    int mismatches() const { return mismatches_; }

private:
    tutorial::Table table_{{{"after"}, {"attribute"}, {"reported"}, {"expected"}, {"ok"}}};
    int mismatches_ = 0;
};

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
    c.check("SetAccessedBy(GPU), (host)", "AccessedBy", accessed_by(data, bytes),
            format("{-1,%d}", d));
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseUnsetAccessedBy, gpu));
    c.check("UnsetAccessedBy(GPU)", "AccessedBy", accessed_by(data, bytes), "{-1}");
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseUnsetAccessedBy, host));
    c.check("UnsetAccessedBy(host)", "AccessedBy", accessed_by(data, bytes), "{}");
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
    const int advice_mismatches = checks.mismatches();

    // Page rounding: advice on 16 bytes covers the whole page they are on, and only that page.
    CUDA_CHECK(cudaMemAdvise(data, 16, cudaMemAdviseSetReadMostly, gpu_location(ctx.device)));
    checks.check("SetReadMostly on bytes 0-15", "ReadMostly at byte 1024",
                 int_attribute(data + 1024, 4, cudaMemRangeAttributeReadMostly), 1);
    checks.check("SetReadMostly on bytes 0-15", format("ReadMostly at byte %zu", page),
                 int_attribute(data + page, 4, cudaMemRangeAttributeReadMostly), 0);
    CUDA_CHECK(cudaFree(data));

    checks.print();
    std::printf(
        "\nThe int forms use -1 for the host and -2 for \"none\"; the CUDA 13 Type/Id forms name\n"
        "the location kind. Advice and prefetches apply to whole pages (%zu bytes here): 16\n"
        "bytes of advice covered byte 1024 of the same page but not the next page.\n",
        page);
    const int rounding_mismatches = checks.mismatches() - advice_mismatches;
    std::printf("\n");
    ctx.claim(tutorial::observed(
        "the range attributes report each advice and prefetch as set, and unset clears it",
        advice_mismatches == 0, format("%d attribute(s) differed", advice_mismatches),
        "this driver reports a location in another form; the NO rows show which"));
    ctx.claim(tutorial::observed(
        "advice on 16 bytes covers their whole page, and only that page", rounding_mismatches == 0,
        format("byte 1024 read mostly, byte %zu not: %d mismatch(es)", page, rounding_mismatches),
        "managed pages larger than the CPU's page size on this system"));
    return ctx.verdict(checks.mismatches() == 0,
                       format("every reported attribute equals what was set (%d mismatches)",
                              checks.mismatches()));
}
