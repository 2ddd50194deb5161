// Asking the device what it is and what it can do: single attributes through the runtime or the
// driver API, its free memory, and the device report each chapter's `properties` section prints.
#pragma once

#include "common/chapter.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

namespace tutorial {

// cudaDeviceGetAttribute, checked.
int device_attribute(int device, cudaDeviceAttr attribute);

// cuDeviceGetAttribute for a runtime device number, checked: for the attributes only the driver
// API knows (the CU_DEVICE_ATTRIBUTE_... of virtual memory management, for example).
int driver_attribute(int device, CUdevice_attribute attribute);

// The current device's free memory, from cudaMemGetInfo.
std::size_t free_device_memory();

// One device property read through two independent paths (say cudaDeviceProp and
// cudaDeviceGetAttribute, or the runtime and the driver API).
struct DeviceFact {
    std::string name;
    int first;
    int second;
    std::string meaning;  // what the value means for the code in this chapter
};

// The device report every chapter's `properties` section makes: the device's name and compute
// capability, a table of the facts, then `conclusion` (what they mean here), and the section's
// verdict on whether the two sources agree on every fact.
Result check_device_facts(Context& ctx, const char* first_source, const char* second_source,
                          const std::vector<DeviceFact>& facts, const std::string& conclusion = "");

}  // namespace tutorial
