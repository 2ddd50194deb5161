// Asking the device what it is and what it can do: single attributes through the runtime or the
// driver API, its peak memory bandwidth, its free memory, whether its primary context exists.
// (The `properties` sections' report, which tries what each attribute predicts, is the course's
// harness: common/predictions.hpp.)
#pragma once


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

// Whether every visible device has canUseHostPointerForRegisteredMem = 1: then, by the Runtime
// API reference's cudaHostRegister entry, the device pointer of registered memory is its host
// pointer. Where any device has 0, registered memory has a device address of its own.
bool every_device_uses_host_pointer_for_registered();

// cuDeviceGetAttribute for a runtime device number, checked: for the attributes only the driver
// API knows (the CU_DEVICE_ATTRIBUTE_... of virtual memory management, for example).
int driver_attribute(int device, CUdevice_attribute attribute);

// What a claim assumes about the machine, read from the device (docs/hardware.md lists which
// claim assumes what). Each returns "" when the assumption holds, else why not, in words that
// name the attribute, for a SKIP or a "CLAIM not judged" line.
//
// Peer access between every pair of the first `gpus` GPUs (cudaDeviceCanAccessPeer): PCIe cards
// without P2P support, and GPUs under different root complexes, have none.
std::string why_no_peer_access(int gpus);
// On-demand paging of managed memory (concurrentManagedAccess = 1): without it (Windows, WSL,
// Jetson) managed memory moves as a whole at kernel launch, and nothing faults page by page.
std::string why_no_on_demand_paging(int device);
// Managed memory that migrates on access: on hardware-coherent systems (Grace Hopper: the CPU
// reaches GPU memory directly, directManagedMemAccessFromHost = 1, or the GPU uses the host's page
// tables, pageableMemoryAccessUsesHostPageTables = 1) the driver may leave pages where they are
// and access them remotely, so claims about pages moving need not hold.
std::string why_hardware_coherent(int device);
// Either of the two above: the reason managed pages may not move on first touch here, or "".
std::string why_pages_need_not_migrate(int device);

// The PCIe link between the GPU and the host as Linux reports it: the GPU's PCI device
// (cudaDeviceGetPCIBusId) in /sys/bus/pci/devices has current_link_speed ("32.0 GT/s PCIe") and
// current_link_width ("16"). GB/s per direction after the line code (8b/10b up to 5 GT/s,
// 128b/130b from 8 GT/s): 63.0 for Gen5 x16, 31.5 for Gen4 x16, 15.8 for Gen3 x16. 0 where it
// cannot be read (another operating system, a virtual machine that hides it), with `what` empty;
// otherwise `what` says it in words ("PCIe 32.0 GT/s x16").
double pcie_link_gbps(int device, std::string* what = nullptr);

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

// Whether runtime device `device`'s primary context exists now (cuDevicePrimaryCtxGetState).
// Asking never creates it, so a fresh process can watch which call does (chapters 02 and 03).
bool primary_context_active(int device);

}  // namespace tutorial
