// Checks of section basics: runs the journey of ../basics.cpp, tables what CUDA called each
// buffer, and judges the types and the value that arrived.
#include "02_pinned/basics.cpp"

#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <cstdio>

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
