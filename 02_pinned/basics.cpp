// Section `basics`: the three places a float can live (device, pageable and pinned host memory),
// a value carried through all three, and each one freed with the call that matches how it was
// allocated.
#include "common/check.hpp"
#include "common/harness/report.hpp"
#include "common/harness/chapter.hpp"

#include <cstdio>
#include <limits>
#include <string>

namespace {

constexpr int count = 100;

// What the three allocations are to CUDA, and what arrived at the end of the journey.
struct Journey {
    std::string device_type, host_type, pinned_type;
    float value;  // memory_page_locked[2]
    int wrong;    // values that differ from the pageable original
};

// lesson:begin
const char* memory_type_name(const void* pointer) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    switch (attributes.type) {
        case cudaMemoryTypeUnregistered: return "cudaMemoryTypeUnregistered";
        case cudaMemoryTypeHost: return "cudaMemoryTypeHost";
        case cudaMemoryTypeDevice: return "cudaMemoryTypeDevice";
        case cudaMemoryTypeManaged: return "cudaMemoryTypeManaged";
    }
    return "?";
}

// A value carried pageable -> device -> pinned; each buffer freed with its own call.
Journey carry_a_value() {
    const std::size_t bytes = count * sizeof(float);
    float* memory_device = nullptr;
    CUDA_CHECK(cudaMalloc(&memory_device, bytes));
    float* memory_host = new float[count];  // every element gets a value, not only element 2
    for (int i = 0; i < count; ++i) memory_host[i] = 0.5f * static_cast<float>(i);
    memory_host[2] = 520.25f;
    CUDA_CHECK(cudaMemcpy(memory_device, memory_host, bytes, cudaMemcpyHostToDevice));
    float* memory_page_locked = nullptr;
    CUDA_CHECK(cudaMallocHost(&memory_page_locked, bytes));
    for (int i = 0; i < count; ++i) memory_page_locked[i] = std::numeric_limits<float>::quiet_NaN();
    CUDA_CHECK(cudaMemcpy(memory_page_locked, memory_device, bytes, cudaMemcpyDeviceToHost));

    Journey j{memory_type_name(memory_device), memory_type_name(memory_host),
              memory_type_name(memory_page_locked), memory_page_locked[2], 0};
    for (int i = 0; i < count; ++i) j.wrong += !(memory_page_locked[i] == memory_host[i]);
    CUDA_CHECK(cudaFreeHost(memory_page_locked));
    delete[] memory_host;
    CUDA_CHECK(cudaFree(memory_device));
    return j;
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

}  // namespace

tutorial::Result run_basics(tutorial::Context& ctx) {
    std::printf(
        "device memory from cudaMalloc, pageable memory from new[], pinned memory from\n"
        "cudaMallocHost; %d floats are copied pageable -> device -> pinned.\n\n",
        count);
    const Journey j = carry_a_value();
    const std::string& device_type = j.device_type;
    const std::string& host_type = j.host_type;
    const std::string& pinned_type = j.pinned_type;
    tutorial::Table table(
        {{"pointer"}, {"allocated with"}, {"cudaPointerGetAttributes"}, {"freed with"}});
    table.add_row({"memory_device", "cudaMalloc", device_type, "cudaFree"});
    table.add_row({"memory_host", "new float[100]", host_type, "delete[]"});
    table.add_row({"memory_page_locked", "cudaMallocHost", pinned_type, "cudaFreeHost"});
    table.print();
    const float value = j.value;
    const int wrong = j.wrong;
    std::printf(
        "\nmemory_page_locked[2] = %f (expected %f); %d of %d values differ from\n"
        "the pageable original.\n",
        value, 520.25f, wrong, count);
    std::printf(
        "\nThe runtime knows nothing about memory from new[] (\"unregistered\"): the first copy\n"
        "had to stage it through a pinned buffer of the driver's own. The pinned buffer is\n"
        "known to CUDA as host memory, so the copy engine wrote into it directly.\n\n");
    ctx.claim(tutorial::documented(
        "CUDA knows pinned memory as host memory and memory from new[] not at all",
        device_type == "cudaMemoryTypeDevice" && host_type == "cudaMemoryTypeUnregistered" &&
            pinned_type == "cudaMemoryTypeHost",
        "device: " + device_type + ", new[]: " + host_type + ", pinned: " + pinned_type,
        "a system where malloc'd memory is registered with CUDA (HMM or ATS)",
        "Runtime API reference: cudaPointerGetAttributes (cudaMemoryTypeHost for registered "
        "host memory, cudaMemoryTypeUnregistered for host memory CUDA does not know)"));
    ctx.claim(tutorial::documented(
        "a value carried pageable -> device -> pinned arrives unchanged",
        value == 520.25f && wrong == 0,
        tutorial::format("memory_page_locked[2] = %g, %d of %d values differ", value, wrong, count),
        "a copy that did not complete, or went to the wrong buffer",
        "Runtime API reference: cudaMemcpy"));
    return ctx.verdict(value == 520.25f && wrong == 0,
                       tutorial::format("memory_page_locked[2] == 520.25 and all %d values "
                                        "survived pageable -> device -> pinned",
                                        count));
}

TUTORIAL_SECTION(basics, run_basics);
