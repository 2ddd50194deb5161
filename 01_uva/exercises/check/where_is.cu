// The course's check of exercise ex01_where_is (the task is in ../where_is.cu): the learner's
// where_is() must name the kind of memory behind each of 10 pointers whose kind the check knows,
// because it made them.
#include "common/check.hpp"
#include "common/harness/chapter.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

// Written by the learner (exercises/where_is.cu).
const char* where_is(const void* pointer);

namespace {

using tutorial::Context;
using tutorial::Result;

struct Case {
    const char* made_by;
    const void* pointer;
    const char* expected;
};

Result check(Context& ctx) {
    constexpr std::size_t bytes = 1 << 20;
    char* device = nullptr;
    char* pinned = nullptr;
    char* mapped = nullptr;
    char* managed = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    CUDA_CHECK(cudaHostAlloc(&mapped, bytes, cudaHostAllocMapped));
    CUDA_CHECK(cudaMallocManaged(&managed, bytes, cudaMemAttachGlobal));
    std::vector<char> pageable(bytes);
    std::vector<char> registered(bytes);
    CUDA_CHECK(cudaHostRegister(registered.data(), bytes, cudaHostRegisterDefault));
    int on_stack = 0;
    const std::unique_ptr<char[]> on_heap(new char[bytes]);

    const std::vector<Case> cases = {
        {"cudaMalloc", device, "device"},
        {"cudaMalloc, 4 KiB in", device + 4096, "device"},
        {"cudaMallocHost", pinned, "pinned"},
        {"cudaHostAlloc(Mapped), 100 B in", mapped + 100, "pinned"},
        {"cudaHostRegister", registered.data(), "pinned"},
        {"cudaMallocManaged", managed, "managed"},
        {"cudaMallocManaged, 1 B before its end", managed + bytes - 1, "managed"},
        {"std::vector (malloc)", pageable.data(), "pageable"},
        {"the stack", &on_stack, "pageable"},
        {"new[], 10 B in", on_heap.get() + 10, "pageable"},
    };
    std::printf("%-40s  %-9s  %s\n", "pointer made by", "expected", "where_is() said");
    int wrong = 0;
    for (const Case& c : cases) {
        const char* said = where_is(c.pointer);
        const bool right = said != nullptr && std::strcmp(said, c.expected) == 0;
        wrong += right ? 0 : 1;
        std::printf("%-40s  %-9s  %s%s\n", c.made_by, c.expected, said ? said : "(null)",
                    right ? "" : "   <- wrong");
    }
    // cudaPointerGetAttributes: the type is cudaMemoryTypeHost, cudaMemoryTypeDevice,
    // cudaMemoryTypeManaged or cudaMemoryTypeUnregistered (a pointer inside an allocation too).
    ctx.claim(tutorial::documented(
        "names_every_pointer", "where_is names the memory behind every pointer", wrong == 0,
        std::to_string(wrong) + " of " + std::to_string(cases.size()) + " answers wrong",
        "the answer does not come from CUDA. First step: call cudaPointerGetAttributes on the "
        "pointer and look at the type it reports",
        tutorial::Entry{"Runtime API reference: cudaPointerGetAttributes",
                        "cudaMemoryTypeHost cudaMemoryTypeDevice cudaMemoryTypeManaged", "can"}));

    CUDA_CHECK(cudaHostUnregister(registered.data()));
    CUDA_CHECK(cudaFree(managed));
    CUDA_CHECK(cudaFreeHost(mapped));
    CUDA_CHECK(cudaFreeHost(pinned));
    CUDA_CHECK(cudaFree(device));
    return ctx.verdict(wrong == 0, std::to_string(cases.size() - wrong) + " of " +
                                       std::to_string(cases.size()) + " pointers named right");
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex01_where_is",
        "Exercise (chapter 01_uva): where does a pointer's memory live?",
        {{"check", "where_is: the kind of memory behind 10 pointers", {}, true, check}},
        {},
        "01_uva/exercises/where_is.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
