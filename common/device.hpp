// Asking the device what it is and what it can do: single attributes through the runtime or the
// driver API, its peak memory bandwidth, its free memory, whether its primary context exists.
// (The `properties` sections' report, which tries what each attribute predicts, is the course's
// harness: common/harness/predictions.hpp.)
#pragma once


#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

namespace tutorial {

// How many CUDA devices this process sees (cudaGetDeviceCount), for sections that use several.
int device_count();

// Why this process has no usable CUDA device, in one line, or "" where it has one: no driver
// installed, a driver older than this program's runtime, no GPU visible (CUDA_VISIBLE_DEVICES
// empty), with what cudaGetDeviceCount returned. The course's programs, and a lesson built on
// its own (common/standalone.cu), print it as their SKIP line and exit with 77.
std::string why_no_usable_device();

// cudaDeviceGetAttribute, checked.
int device_attribute(int device, cudaDeviceAttr attribute);

// Whether every visible device has canUseHostPointerForRegisteredMem = 1: then, by the Runtime
// API reference's cudaHostRegister entry, the device pointer of registered memory is its host
// pointer. Where any device has 0, registered memory has a device address of its own.
bool every_device_uses_host_pointer_for_registered();

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
// The enum value's own name: "cudaMemoryTypeDevice", ... ("cudaMemoryType 7" for one unknown).
std::string memory_type_name(cudaMemoryType type);

// Whether runtime device `device`'s primary context exists now (cuDevicePrimaryCtxGetState).
// Asking never creates it, so a fresh process can watch which call does (chapters 02 and 03).
bool primary_context_active(int device);

}  // namespace tutorial
