// Section `attributes`: ask cudaPointerGetAttributes about every kind of pointer a program has.
#include "common/check.hpp"
#include "common/report.hpp"
#include "sections.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

__device__ __managed__ int managed_global[256];

const char* type_name(cudaMemoryType type) {
    switch (type) {
        case cudaMemoryTypeUnregistered: return "cudaMemoryTypeUnregistered";
        case cudaMemoryTypeHost: return "cudaMemoryTypeHost";
        case cudaMemoryTypeDevice: return "cudaMemoryTypeDevice";
        case cudaMemoryTypeManaged: return "cudaMemoryTypeManaged";
    }
    return "?";
}

// How an attribute's pointer field relates to the pointer we asked about.
std::string describe(const void* field, const void* pointer) {
    if (field == nullptr) return "NULL";
    if (field == pointer) return "same";
    return tutorial::format("%p", field);
}

struct Probe {
    const char* allocation;
    const void* pointer;
    cudaMemoryType expected;
};

}  // namespace

tutorial::Result run_attributes(tutorial::Context& ctx) {
    const int uva = tutorial::device_attribute(ctx.device, cudaDevAttrUnifiedAddressing);
    const int registered_same_address =
        tutorial::device_attribute(ctx.device, cudaDevAttrCanUseHostPointerForRegisteredMem);
    std::printf(
        "unifiedAddressing = %d: %s\n\n", uva,
        uva ? "the host and every GPU share one 64-bit virtual address space, so CUDA can tell\n"
              "from the address alone which allocation (and which device) a pointer belongs to."
            : "no unified address space; pointer attributes only work for CUDA allocations.");

    const std::size_t bytes = 64 * 1024;
    void* device = nullptr;
    void* malloc_host = nullptr;
    void* host_default = nullptr;
    void* host_portable = nullptr;
    void* host_mapped = nullptr;
    void* host_write_combined = nullptr;
    void* managed = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    CUDA_CHECK(cudaMallocHost(&malloc_host, bytes));
    CUDA_CHECK(cudaHostAlloc(&host_default, bytes, cudaHostAllocDefault));
    CUDA_CHECK(cudaHostAlloc(&host_portable, bytes, cudaHostAllocPortable));
    CUDA_CHECK(cudaHostAlloc(&host_mapped, bytes, cudaHostAllocMapped));
    CUDA_CHECK(cudaHostAlloc(&host_write_combined, bytes, cudaHostAllocWriteCombined));
    CUDA_CHECK(cudaMallocManaged(&managed, bytes));
    void* registered = std::malloc(bytes);
    CUDA_CHECK(cudaHostRegister(registered, bytes, cudaHostRegisterDefault));
    void* plain_malloc = std::malloc(bytes);
    auto* plain_new = new std::uint32_t[bytes / sizeof(std::uint32_t)];
    int on_the_stack[16] = {};

    const std::vector<Probe> probes = {
        {"cudaMalloc", device, cudaMemoryTypeDevice},
        {"cudaMallocHost", malloc_host, cudaMemoryTypeHost},
        {"cudaHostAlloc(Default)", host_default, cudaMemoryTypeHost},
        {"cudaHostAlloc(Portable)", host_portable, cudaMemoryTypeHost},
        {"cudaHostAlloc(Mapped)", host_mapped, cudaMemoryTypeHost},
        {"cudaHostAlloc(WriteCombined)", host_write_combined, cudaMemoryTypeHost},
        {"malloc + cudaHostRegister", registered, cudaMemoryTypeHost},
        {"cudaMallocManaged", managed, cudaMemoryTypeManaged},
        {"__managed__ variable", managed_global, cudaMemoryTypeManaged},
        {"malloc", plain_malloc, cudaMemoryTypeUnregistered},
        {"new[]", plain_new, cudaMemoryTypeUnregistered},
        {"stack array", on_the_stack, cudaMemoryTypeUnregistered},
    };

    tutorial::Table table({{"allocation"},
                           {"address"},
                           {"returns"},
                           {"type"},
                           {"device", tutorial::Align::right},
                           {"devicePointer"},
                           {"hostPointer"},
                           {"as documented"}});
    int wrong = 0;
    for (const Probe& probe : probes) {
        cudaPointerAttributes attributes{};
        const cudaError_t status = cudaPointerGetAttributes(&attributes, probe.pointer);
        // What the documentation promises for each type. Memory CUDA allocated or registered
        // belongs to the device that was current (ours); under UVA its device address is its
        // host address, except for registered memory where the device says otherwise.
        bool ok = status == cudaSuccess && attributes.type == probe.expected;
        switch (probe.expected) {
            case cudaMemoryTypeDevice:
                ok = ok && attributes.device == ctx.device &&
                     attributes.devicePointer == probe.pointer && attributes.hostPointer == nullptr;
                break;
            case cudaMemoryTypeHost:
                ok = ok && attributes.device == ctx.device &&
                     attributes.hostPointer == probe.pointer &&
                     attributes.devicePointer != nullptr &&
                     (attributes.devicePointer == probe.pointer ||
                      (probe.pointer == registered && !registered_same_address));
                break;
            case cudaMemoryTypeManaged:
                ok = ok && attributes.devicePointer == probe.pointer &&
                     attributes.hostPointer == probe.pointer;
                break;
            case cudaMemoryTypeUnregistered:
                break;  // CUDA knows nothing about it: only the type is promised
        }
        wrong += ok ? 0 : 1;
        table.add_row({probe.allocation, tutorial::format("%p", probe.pointer),
                       cudaGetErrorName(status), type_name(attributes.type),
                       std::to_string(attributes.device),
                       describe(attributes.devicePointer, probe.pointer),
                       describe(attributes.hostPointer, probe.pointer), ok ? "yes" : "NO"});
    }
    table.print();
    std::printf(
        "\n\"same\" means the field equals the pointer we asked about: under UVA a pinned host\n"
        "buffer has one address that works on both sides. Memory CUDA never saw (malloc, new,\n"
        "the stack) is not an error since CUDA 11: it is reported as unregistered.\n");

    CUDA_CHECK(cudaHostUnregister(registered));
    std::free(registered);
    std::free(plain_malloc);
    delete[] plain_new;
    CUDA_CHECK(cudaFree(managed));
    CUDA_CHECK(cudaFreeHost(host_write_combined));
    CUDA_CHECK(cudaFreeHost(host_mapped));
    CUDA_CHECK(cudaFreeHost(host_portable));
    CUDA_CHECK(cudaFreeHost(host_default));
    CUDA_CHECK(cudaFreeHost(malloc_host));
    CUDA_CHECK(cudaFree(device));

    const int total = static_cast<int>(probes.size());
    return ctx.verdict(wrong == 0,
                       tutorial::format("%d of %d pointer kinds report the documented type, "
                                        "device and addresses",
                                        total - wrong, total));
}
