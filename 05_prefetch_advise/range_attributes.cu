// Section `range_attributes`: what cudaMemRangeGetAttribute(s) report after each advice, unset and
// prefetch, and the page rounding that applies advice given on a few bytes to whole pages.
#include "common/check.hpp"
#include "common/report.hpp"
#include "managed.hpp"
#include "sections.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;

namespace {

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

}  // namespace

tutorial::Result run_range_attributes(tutorial::Context& ctx) {
    const int d = ctx.device;
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = 64 * page;
    char* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    const cudaMemLocation gpu = gpu_location(d);
    const cudaMemLocation host = host_location();

    tutorial::Table table({{"after"}, {"attribute"}, {"reported"}, {"expected"}, {"ok"}});
    int mismatches = 0;
    const auto check = [&](const std::string& after, const std::string& attribute,
                           const std::string& reported, const std::string& expected) {
        const bool ok = reported == expected;
        mismatches += ok ? 0 : 1;
        table.add_row({after, attribute, reported, expected, ok ? "yes" : "NO"});
    };
    const auto preferred = [&] {
        return get_location(data, bytes, cudaMemRangeAttributePreferredLocationType,
                            cudaMemRangeAttributePreferredLocationId);
    };
    const auto last_prefetch = [&] {
        return get_location(data, bytes, cudaMemRangeAttributeLastPrefetchLocationType,
                            cudaMemRangeAttributeLastPrefetchLocationId);
    };
    const std::string device_name = format("Device %d", d);
    const auto as_int = [](int v) { return std::to_string(v); };

    check("allocation", "ReadMostly",
          as_int(range_attribute(data, bytes, cudaMemRangeAttributeReadMostly)), "0");
    check("allocation", "PreferredLocation",
          as_int(range_attribute(data, bytes, cudaMemRangeAttributePreferredLocation)), "-2");
    check("allocation", "LastPrefetchLocation",
          as_int(range_attribute(data, bytes, cudaMemRangeAttributeLastPrefetchLocation)), "-2");

    advise(data, bytes, cudaMemAdviseSetReadMostly, gpu);
    check("SetReadMostly", "ReadMostly",
          as_int(range_attribute(data, bytes, cudaMemRangeAttributeReadMostly)), "1");
    advise(data, bytes, cudaMemAdviseUnsetReadMostly, gpu);
    check("UnsetReadMostly", "ReadMostly",
          as_int(range_attribute(data, bytes, cudaMemRangeAttributeReadMostly)), "0");

    advise(data, bytes, cudaMemAdviseSetPreferredLocation, gpu);
    check("SetPreferredLocation(GPU)", "PreferredLocation",
          as_int(range_attribute(data, bytes, cudaMemRangeAttributePreferredLocation)), as_int(d));
    check("SetPreferredLocation(GPU)", "PreferredLocationType/Id", preferred(), device_name);
    advise(data, bytes, cudaMemAdviseSetPreferredLocation, host);
    check("SetPreferredLocation(host)", "PreferredLocation",
          as_int(range_attribute(data, bytes, cudaMemRangeAttributePreferredLocation)), "-1");
    check("SetPreferredLocation(host)", "PreferredLocationType/Id", preferred(), "Host");
    advise(data, bytes, cudaMemAdviseUnsetPreferredLocation, host);
    check("UnsetPreferredLocation", "PreferredLocation",
          as_int(range_attribute(data, bytes, cudaMemRangeAttributePreferredLocation)), "-2");
    check("UnsetPreferredLocation", "PreferredLocationType/Id", preferred(), "Invalid");

    advise(data, bytes, cudaMemAdviseSetAccessedBy, gpu);
    advise(data, bytes, cudaMemAdviseSetAccessedBy, host);
    check("SetAccessedBy(GPU), (host)", "AccessedBy", accessed_by(data, bytes),
          format("{-1,%d}", d));
    advise(data, bytes, cudaMemAdviseUnsetAccessedBy, gpu);
    check("UnsetAccessedBy(GPU)", "AccessedBy", accessed_by(data, bytes), "{-1}");
    advise(data, bytes, cudaMemAdviseUnsetAccessedBy, host);
    check("UnsetAccessedBy(host)", "AccessedBy", accessed_by(data, bytes), "{}");

    prefetch(data, bytes, gpu, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    check("prefetch to GPU", "LastPrefetchLocation",
          as_int(range_attribute(data, bytes, cudaMemRangeAttributeLastPrefetchLocation)),
          as_int(d));
    check("prefetch to GPU", "LastPrefetchLocationType/Id", last_prefetch(), device_name);
    prefetch(data, bytes, host, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    check("prefetch to host", "LastPrefetchLocation",
          as_int(range_attribute(data, bytes, cudaMemRangeAttributeLastPrefetchLocation)), "-1");
    check("prefetch to host", "LastPrefetchLocationType/Id", last_prefetch(), "Host");

    // Page rounding: advice on 16 bytes covers the whole page they are on, and only that page.
    advise(data, 16, cudaMemAdviseSetReadMostly, gpu);
    check("SetReadMostly on bytes 0-15", "ReadMostly at byte 1024",
          as_int(range_attribute(data + 1024, 4, cudaMemRangeAttributeReadMostly)), "1");
    check("SetReadMostly on bytes 0-15", format("ReadMostly at byte %zu", page),
          as_int(range_attribute(data + page, 4, cudaMemRangeAttributeReadMostly)), "0");
    CUDA_CHECK(cudaFree(data));

    table.print();
    std::printf(
        "\nThe int forms use -1 for the host and -2 for \"none\"; the CUDA 13 Type/Id forms name\n"
        "the location kind. Advice and prefetches apply to whole pages (%zu bytes here): 16\n"
        "bytes of advice covered byte 1024 of the same page but not the next page.\n",
        page);
    return ctx.verdict(
        mismatches == 0,
        format("every reported attribute equals what was set (%d mismatches)", mismatches));
}
