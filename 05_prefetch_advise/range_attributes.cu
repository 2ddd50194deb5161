// Section range_attributes: what does cudaMemRangeGetAttribute(s) say after each advice, unset and
// prefetch on 64 pages of managed memory? And how far does advice on 16 bytes reach? Alone:
//   nvcc -std=c++17 -I. 05_prefetch_advise/range_attributes.cu common/standalone.cu
//       -o build/range_attributes  (on the same line)
//   (or in 05_prefetch_advise/: nvcc -std=c++17 -I.. range_attributes.cu ../common/standalone.cu
//       -o ../build/range_attributes)  (on the same line)
#include "common/check.hpp"
#include "common/text.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>
#include <unistd.h>

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
// ids only; how the host appears where it has the advice, it does not say.
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

// What the walkthrough read back: the three attributes of a fresh allocation (a flag, then two
// locations: -2 is cudaInvalidDeviceId), then each step's.
struct Found {
    int read_mostly = 0, preferred = 0, last_prefetch = 0;
    ReadMostlySteps read_mostly_steps{};
    PreferredSteps preferred_steps;
    AccessedBySteps accessed_by_steps;
    PrefetchSteps prefetch_steps;
    Rounding rounding{};
    std::size_t page = 0;  // the CPU page size
};

Found walkthrough(int device) {
    Found f;
    f.page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = 64 * f.page;
    char* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    f.read_mostly = int_attribute(data, bytes, cudaMemRangeAttributeReadMostly);
    f.preferred = int_attribute(data, bytes, cudaMemRangeAttributePreferredLocation);
    f.last_prefetch = int_attribute(data, bytes, cudaMemRangeAttributeLastPrefetchLocation);
    f.read_mostly_steps = set_and_unset_read_mostly(data, bytes, device);
    f.preferred_steps = set_and_unset_preferred_location(data, bytes, device);
    f.accessed_by_steps = set_and_unset_accessed_by(data, bytes, device);
    f.prefetch_steps = prefetch_there_and_back(data, bytes, device);
    f.rounding = read_mostly_on_16_bytes(data, f.page, device);
    CUDA_CHECK(cudaFree(data));
    return f;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const Found f = walkthrough(0);
    std::printf("a new allocation: ReadMostly %d, PreferredLocation %d, LastPrefetchLocation %d\n",
                f.read_mostly, f.preferred, f.last_prefetch);
    std::printf("ReadMostly: %d after Set, %d after Unset\n", f.read_mostly_steps.set,
                f.read_mostly_steps.unset);
    std::printf("PreferredLocation: %d (%s), then %d (%s), then %d (%s)\n",
                f.preferred_steps.gpu.as_int, f.preferred_steps.gpu.type_id.c_str(),
                f.preferred_steps.host.as_int, f.preferred_steps.host.type_id.c_str(),
                f.preferred_steps.unset.as_int, f.preferred_steps.unset.type_id.c_str());
    std::printf("AccessedBy: %zu entries for the GPU and the host, %zu for the host, %zu after\n",
                f.accessed_by_steps.both.size(), f.accessed_by_steps.host_only.size(),
                f.accessed_by_steps.none.size());
    std::printf("LastPrefetchLocation: %d after a prefetch to the GPU, %d after one to the host\n",
                f.prefetch_steps.to_gpu.as_int, f.prefetch_steps.to_host.as_int);
    std::printf("ReadMostly on bytes 0-15: %d at byte 1024, %d at byte %zu\n",
                f.rounding.same_page, f.rounding.next_page, f.page);
    return 0;
}
#endif
