// Asking the device what it is and what it can do: single attributes through the runtime or the
// driver API, its peak memory bandwidth, its free memory, and the report each chapter's
// `properties` section prints, where each property's prediction is checked against behaviour.
#pragma once

#include "common/chapter.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

namespace tutorial {

// How many CUDA devices this process sees (cudaGetDeviceCount), for sections that use several.
int device_count();

// cudaDeviceGetAttribute, checked.
int device_attribute(int device, cudaDeviceAttr attribute);

// cuDeviceGetAttribute for a runtime device number, checked: for the attributes only the driver
// API knows (the CU_DEVICE_ATTRIBUTE_... of virtual memory management, for example).
int driver_attribute(int device, CUdevice_attribute attribute);

// The device memory's peak bandwidth in GB/s (1e9 B/s), from the data sheet's formula: memory
// clock (cudaDevAttrMemoryClockRate, kHz) x 2 transfers per clock x bus width in bytes
// (cudaDevAttrGlobalMemoryBusWidth, bits). 3352 GB/s on an H100 SXM, 4800 on an H200.
double peak_memory_gbps(int device);

// The current device's free memory, from cudaMemGetInfo.
std::size_t free_device_memory();

// A section's default size where the GPU may be small: `wanted`, or less where that is more than
// `share` of the free memory; in whole `multiple`s, and at least one. A size the user gave with
// --size is checked against free memory before the section runs (Takes::holds), not shrunk.
std::size_t fit_in_free_memory(std::size_t wanted, double share, std::size_t multiple);

// Device memory taken since free_device_memory() returned `free_at_start` (0 if some came back):
// for sections and checks that run alone (RUN_SERIAL), where no one else allocates meanwhile.
std::size_t device_memory_used_since(std::size_t free_at_start);

// What cudaPointerGetAttributes says a pointer points into: device, (pinned) host, managed, or
// memory CUDA does not know (Unregistered). For checks; sections call it themselves.
cudaMemoryType memory_type(const void* pointer);

// A device property and the behaviour it predicts, checked by doing it: canMapHostMemory = 1
// predicts that a kernel can write through a mapped host pointer, so the section has a kernel try.
struct Prediction {
    std::string property;  // "canMapHostMemory"
    int value;             // what the device reports for it
    std::string predicts;  // the behaviour this value predicts, in words
    bool came_true;        // what the section observed agrees with the prediction
    std::string seen;      // what the section observed, in words
    Evidence evidence = Evidence::behaviour;  // timing: not judged under compute-sanitizer
};

// The report every chapter's `properties` section makes: the device's name, a table of the
// properties, what each predicts and what was seen, one CLAIM line per prediction, `conclusion`
// (what the values mean for this chapter), and the verdict.
Result check_predictions(Context& ctx, const std::vector<Prediction>& predictions,
                         const std::string& conclusion = "");

}  // namespace tutorial
