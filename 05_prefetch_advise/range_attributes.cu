// Section range_attributes: cudaMemRangeGetAttribute(s) read back after each advice, unset and
// prefetch, and the page rounding that applies advice on a few bytes to their whole page.
// (checks/range_attributes.cu compares every value with what the reference defines.)
#include "common/check.hpp"
#include "common/text.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace {

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
    return type == cudaMemLocationTypeDevice ? tutorial::format("%s %d", name, id) : name;
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

// A location attribute both ways: the int, and the CUDA 13 Type/Id.
struct Location {
    int as_int;
    std::string type_id;
};

Location preferred_location(const void* data, std::size_t bytes) {
    return {int_attribute(data, bytes, cudaMemRangeAttributePreferredLocation),
            get_location(data, bytes, cudaMemRangeAttributePreferredLocationType,
                         cudaMemRangeAttributePreferredLocationId)};
}

Location last_prefetch_location(const void* data, std::size_t bytes) {
    return {int_attribute(data, bytes, cudaMemRangeAttributeLastPrefetchLocation),
            get_location(data, bytes, cudaMemRangeAttributeLastPrefetchLocationType,
                         cudaMemRangeAttributeLastPrefetchLocationId)};
}

// Step 1. ReadMostly, set, then unset; the attribute after each.
struct ReadMostlySteps {
    int set, unset;
};

ReadMostlySteps set_and_unset_read_mostly(void* data, std::size_t bytes, int device) {
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};  // ignored for ReadMostly
    ReadMostlySteps r{};
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetReadMostly, gpu));
    r.set = int_attribute(data, bytes, cudaMemRangeAttributeReadMostly);
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseUnsetReadMostly, gpu));
    r.unset = int_attribute(data, bytes, cudaMemRangeAttributeReadMostly);
    return r;
}

// Step 2. PreferredLocation: the GPU, then the host (it replaces the GPU), then unset.
struct PreferredSteps {
    Location gpu, host, unset;
};

PreferredSteps set_and_unset_preferred_location(void* data, std::size_t bytes, int device) {
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    const cudaMemLocation host{cudaMemLocationTypeHost, 0};
    PreferredSteps r;
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetPreferredLocation, gpu));
    r.gpu = preferred_location(data, bytes);
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetPreferredLocation, host));
    r.host = preferred_location(data, bytes);
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseUnsetPreferredLocation, host));
    r.unset = preferred_location(data, bytes);
    return r;
}

// Step 3. AccessedBy: unlike a preferred location, several processors can hold it at once. Set
// for the GPU and the host, then unset for one after the other.
struct AccessedBySteps {
    std::vector<int> both, host_only, none;
};

AccessedBySteps set_and_unset_accessed_by(void* data, std::size_t bytes, int device) {
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    const cudaMemLocation host{cudaMemLocationTypeHost, 0};
    AccessedBySteps r;
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetAccessedBy, gpu));
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseSetAccessedBy, host));
    r.both = accessed_by(data, bytes);
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseUnsetAccessedBy, gpu));
    r.host_only = accessed_by(data, bytes);
    CUDA_CHECK(cudaMemAdvise(data, bytes, cudaMemAdviseUnsetAccessedBy, host));
    r.none = accessed_by(data, bytes);
    return r;
}

// Step 4. A prefetch to each side; LastPrefetchLocation names where the last one was asked to go.
struct PrefetchSteps {
    Location to_gpu, to_host;
};

PrefetchSteps prefetch_there_and_back(void* data, std::size_t bytes, int device) {
    PrefetchSteps r;
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, gpu, 0, nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());
    r.to_gpu = last_prefetch_location(data, bytes);
    const cudaMemLocation host{cudaMemLocationTypeHost, 0};
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, host, 0, nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());
    r.to_host = last_prefetch_location(data, bytes);
    return r;
}

// Step 5. Advice applies to whole CPU pages: ReadMostly on bytes 0-15 of a page-aligned range,
// then the attribute at byte 1024 (the same page) and at the first byte of the next page.
struct Rounding {
    int same_page, next_page;
};

Rounding read_mostly_on_16_bytes(char* data, std::size_t page, int device) {
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
    CUDA_CHECK(cudaMemAdvise(data, 16, cudaMemAdviseSetReadMostly, gpu));
    return {int_attribute(data + 1024, 4, cudaMemRangeAttributeReadMostly),
            int_attribute(data + page, 4, cudaMemRangeAttributeReadMostly)};
}

}  // namespace
