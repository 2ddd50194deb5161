// Checks of section basics: runs the walkthrough of ../basics.cpp, tables what CUDA called each
// buffer, and judges the types and the value that arrived.
#include "02_pinned/basics.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <string>

using tutorial::memory_type_name;

tutorial::Result run_basics(tutorial::Context& ctx) {
    std::printf(
        "device memory from cudaMalloc, pageable memory from new[], pinned memory from\n"
        "cudaMallocHost; %d floats are copied pageable -> device -> pinned.\n\n",
        count);
    const Found f = walkthrough();
    const std::string device_type = memory_type_name(f.device_type);
    const std::string host_type = memory_type_name(f.host_type);
    const std::string pinned_type = memory_type_name(f.pinned_type);
    tutorial::Table table(
        {{"pointer"}, {"allocated with"}, {"cudaPointerGetAttributes"}, {"freed with"}});
    table.add_row({"memory_device", "cudaMalloc", device_type, "cudaFree"});
    table.add_row({"memory_host", "new float[100]", host_type, "delete[]"});
    table.add_row({"memory_page_locked", "cudaMallocHost", pinned_type, "cudaFreeHost"});
    table.print();
    std::printf(
        "\nmemory_page_locked[2] = %f (expected %f); %d of %d values differ from\n"
        "the pageable original.\n",
        f.value, 520.25f, f.wrong, count);
    std::printf(
        "\nThe runtime knows nothing about memory from new[] (\"unregistered\"): the first copy\n"
        "had to stage it through a pinned buffer of the driver's own. The pinned buffer is\n"
        "known to CUDA as host memory, so the copy engine wrote into it directly.\n\n");
    ctx.claim(tutorial::documented(
        "pointer_types", "CUDA knows pinned memory as host memory and memory from new[] not at all",
        f.device_type == cudaMemoryTypeDevice && f.host_type == cudaMemoryTypeUnregistered &&
            f.pinned_type == cudaMemoryTypeHost,
        "device: " + device_type + ", new[]: " + host_type + ", pinned: " + pinned_type,
        "a system where malloc'd memory is registered with CUDA (HMM or ATS)",
        tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes",
                        "cudaMemoryTypeUnregistered cudaMemoryTypeHost cudaMemoryTypeDevice",
                        "can"}));
    const bool arrived = f.value == 520.25f && f.wrong == 0;
    ctx.claim(tutorial::documented(
        "value_arrives", "a value carried pageable -> device -> pinned arrives unchanged", arrived,
        tutorial::format("memory_page_locked[2] = %g, %d of %d values differ", f.value, f.wrong,
                         count),
        "a copy that did not complete, or went to the wrong buffer",
        tutorial::Entry{"Runtime API reference: cudaMemcpy",
                        "src dst cudaMemcpyHostToDevice cudaMemcpyDeviceToHost", "copies"}));
    return ctx.verdict(arrived,
                       tutorial::format("memory_page_locked[2] == 520.25 and all %d values "
                                        "survived pageable -> device -> pinned",
                                        count));
}

TUTORIAL_SECTION(basics, run_basics);
