// What a claim assumes about the machine, read from the device (docs/hardware.md lists which
// claim assumes what): the course's harness uses these to say SKIP or "CLAIM not judged" with the
// reason. A learner's program needs none of them.
#pragma once

#include <cstddef>
#include <string>

namespace tutorial {

// A claim whose effect only shows above some size: "" when `bytes` is at least `least`, else why
// the claim is not judged ("below 64 MiB (this run: 4.0 KiB) <what>"), for ctx.claim. `what` says
// what hides the effect: "a copy this small is launch overhead, pinned or not".
std::string why_too_small(std::size_t bytes, std::size_t least, const std::string& what);
// The same for free device memory: "" when at least `least` bytes are free on the current
// device now, else why not ("with 2.9 GiB free (it needs 8 GiB) <what>").
std::string why_too_little_free(std::size_t least, const std::string& what);

// Each returns "" when the assumption holds, else why not, in words that
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

}  // namespace tutorial
