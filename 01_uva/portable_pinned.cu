// Section `portable_pinned` (needs 2 or more GPUs): one pinned host buffer serving every GPU.
// cudaHostAllocPortable asks that the memory count as pinned for every CUDA context, not only the
// current device's. Under unified addressing every pinned allocation is already mapped at one
// address for all GPUs; the section measures whether the flag still changes anything.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/patterns.hpp"
#include "common/report.hpp"
#include "common/timing.hpp"
#include "sections.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using tutorial::format;

namespace {

constexpr std::uint32_t seed = 31;

// cudaHostGetFlags answers in cudaHostAlloc's flag values.
std::string flag_names(unsigned flags) {
    std::string text;
    if (flags & cudaHostAllocPortable) text += "Portable";
    if (flags & cudaHostAllocMapped) text += text.empty() ? "Mapped" : "|Mapped";
    if (flags & cudaHostAllocWriteCombined)
        text += text.empty() ? "WriteCombined" : "|WriteCombined";
    return text.empty() ? "Default" : text;
}

struct Use {
    int gpu;
    const char* buffer;
    double copy_gbps = 0;           // cudaMemcpyAsync host -> this GPU, from the buffer
    std::size_t read_wrong = 0;     // a kernel on this GPU read the buffer through its pointer
    std::size_t written_wrong = 0;  // a kernel on this GPU wrote it; the CPU checked
};

// Everything one GPU does with one pinned buffer: copies from it, a kernel reading it in place, a
// kernel writing it in place.
Use use_from(int gpu, const char* name, std::uint32_t* host, std::size_t count, int runs) {
    Use u{gpu, name};
    const std::size_t bytes = count * sizeof *host;
    CUDA_CHECK(cudaSetDevice(gpu));
    std::uint32_t* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    fill_on_host(host, count, seed);
    const double ms = tutorial::median_event_ms(1, runs, [&] {
        CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, nullptr));
    });
    u.copy_gbps = tutorial::gb_per_s(bytes, ms);
    u.read_wrong =
        mismatches_on_device(device, count, seed) + mismatches_on_device(host, count, seed);
    fill_on_device(host, count, seed + gpu + 1);  // the kernel writes through the host pointer
    u.written_wrong = mismatches_on_host(host, count, seed + gpu + 1);
    CUDA_CHECK(cudaFree(device));
    return u;
}

struct PortableResult {
    unsigned portable_flags = 0, plain_flags = 0;
    unsigned plain_flags_elsewhere = 0;  // the same query with another GPU current
    std::vector<Use> uses;
};

PortableResult measure_portable(int gpus, int home, std::size_t count, int runs) {
    PortableResult r;
    const std::size_t bytes = count * sizeof(std::uint32_t);
    std::uint32_t* portable = nullptr;
    std::uint32_t* plain = nullptr;
    CUDA_CHECK(cudaSetDevice(home));  // both are allocated while the home GPU is current
    CUDA_CHECK(cudaHostAlloc(&portable, bytes, cudaHostAllocPortable));
    CUDA_CHECK(cudaHostAlloc(&plain, bytes, cudaHostAllocDefault));
    CUDA_CHECK(cudaHostGetFlags(&r.portable_flags, portable));
    CUDA_CHECK(cudaHostGetFlags(&r.plain_flags, plain));
    CUDA_CHECK(cudaSetDevice((home + 1) % gpus));
    CUDA_CHECK(cudaHostGetFlags(&r.plain_flags_elsewhere, plain));
    for (int g = 0; g < gpus; ++g) {
        r.uses.push_back(use_from(g, "Portable", portable, count, runs));
        r.uses.push_back(use_from(g, "Default", plain, count, runs));
    }
    CUDA_CHECK(cudaSetDevice(home));
    CUDA_CHECK(cudaFreeHost(portable));
    CUDA_CHECK(cudaFreeHost(plain));
    return r;
}

}  // namespace

tutorial::Result run_portable_pinned(tutorial::Context& ctx) {
    const int gpus = tutorial::device_count();
    if (gpus < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", gpus));
    const std::size_t bytes = ctx.quick() ? (16 << 20) : (256 << 20);
    const int runs = ctx.quick() ? 5 : 9;
    std::printf(
        "With GPU %d current, two %s buffers: cudaHostAlloc(&p, n, cudaHostAllocPortable) and\n"
        "cudaHostAlloc(&p, n, cudaHostAllocDefault). Then every GPU in turn copies each buffer\n"
        "to its own memory (median of %d), has a kernel read it through the host pointer, and\n"
        "has a kernel write it, which the CPU checks.\n\n",
        ctx.device, tutorial::format_bytes(bytes).c_str(), runs);
    const PortableResult r = measure_portable(gpus, ctx.device, bytes / 4, runs);
    std::printf(
        "cudaHostGetFlags: Portable buffer %s; Default buffer %s (%s with GPU %d current)\n\n",
        flag_names(r.portable_flags).c_str(), flag_names(r.plain_flags).c_str(),
        flag_names(r.plain_flags_elsewhere).c_str(), (ctx.device + 1) % gpus);

    tutorial::Table table({{"GPU"},
                           {"buffer"},
                           {"copy to the GPU, GB/s", tutorial::Align::right},
                           {"kernel read in place"},
                           {"kernel wrote, CPU checked"}});
    double slowest = 1e300, fastest = 0;
    int right = 0;
    for (const Use& u : r.uses) {
        slowest = std::min(slowest, u.copy_gbps);
        fastest = std::max(fastest, u.copy_gbps);
        right += u.read_wrong == 0 && u.written_wrong == 0;
        table.add_row({format("GPU %d", u.gpu), u.buffer, format("%.1f", u.copy_gbps),
                       format("%zu wrong", u.read_wrong), format("%zu wrong", u.written_wrong)});
    }
    table.print();
    std::printf(
        "\nUnder unified addressing a pinned allocation is one address in every GPU's space, so\n"
        "the flag no longer decides who can use it. Without unified addressing (32-bit\n"
        "programs, CUDA before 4.0) memory pinned in one context was ordinary pageable memory\n"
        "to the others, and Portable was the way to share it.\n\n");
    const int uses = static_cast<int>(r.uses.size());
    ctx.claim(tutorial::observed(
        "cudaHostGetFlags reports Portable for the buffer that asked for it, and only for it",
        (r.portable_flags & cudaHostAllocPortable) && !(r.plain_flags & cudaHostAllocPortable),
        format("%s and %s", flag_names(r.portable_flags).c_str(),
               flag_names(r.plain_flags).c_str()),
        "the flags were not recorded as given"));
    ctx.claim(tutorial::observed(
        "with or without Portable, kernels on every GPU read and write the buffer in place",
        right == uses, format("%d of %d GPU-buffer pairs right", right, uses),
        "the memory is not mapped for every GPU: no unified addressing"));
    ctx.claim(tutorial::at_least(
        "with or without Portable, every GPU copies from the buffer at pinned speed "
        "(slowest / fastest of all copies)",
        slowest / fastest, 0.8, "x",
        "one GPU treated the Default buffer as pageable memory, or sits behind a slower link"));
    return ctx.verdict(
        right == uses,
        format("every GPU's kernels read and wrote both buffers: %d of %d right", right, uses));
}
