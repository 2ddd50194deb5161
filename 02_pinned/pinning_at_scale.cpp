// Section pinning_at_scale: pinning GiBs, cudaMallocHost against touch on T threads + register.
// Built alone, from the course's folder (mkdir -p build first), then ./build/pinning_at_scale:
//   nvcc -std=c++17 -I. 02_pinned/pinning_at_scale.cpp common/standalone.cu
//       -o build/pinning_at_scale  (on the same line)
//   (or in 02_pinned/: nvcc -std=c++17 -I.. pinning_at_scale.cpp ../common/standalone.cu
//       -o ../build/pinning_at_scale)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"
#include <sys/mman.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched. The
// four ways compared: cudaMallocHost as usual, and pin_large (below) touching on one thread, on T
// threads, and on T threads with huge pages; and the steps each goes through.
enum Way { malloc_host, register_one, register_threads, register_huge, ways };
struct WaySteps {
    tutorial::Step get;     // getting pinned memory
    tutorial::Step upload;  // one copy of all of it to the device
    tutorial::Step give;    // giving it back
};
constexpr WaySteps steps[ways] = {
    {{"new pinned memory (cudaMallocHost)"}, {"upload, cudaMallocHost's"}, {"cudaFreeHost"}},
    {{"touch on 1 thread, cudaHostRegister"},
     {"upload, 1 thread's"},
     {"cudaHostUnregister, 1 thread's"}},
    {{"touch on T threads, cudaHostRegister"},
     {"upload, T threads'"},
     {"cudaHostUnregister, T threads'"}},
    {{"MADV_HUGEPAGE, touch on T threads, cudaHostRegister"},
     {"upload, huge pages'"},
     {"cudaHostUnregister, huge pages'"}},
};

// What the walkthrough found.
struct Found {
    bool pinned;            // cudaPointerGetAttributes said host memory, every way
    std::size_t wrong;      // values of the marked head and tail that did not arrive
    std::size_t huge;       // bytes the huge-page way got on huge pages
};

// Below the walkthrough: pinned memory got and given back each way, and the bytes of this
// process on transparent huge pages.
char* get_pinned(Way way, std::size_t bytes, int threads);
void give_back(Way way, char* host, std::size_t bytes);
std::size_t huge_bytes();

// Each way in turn: get pinned memory, mark both ends, upload all of it, check the ends on the
// device, give it back.
Found walkthrough(std::size_t bytes, int threads) {
    Found found{true, 0, 0};
    const std::size_t marked = 1 << 18;  // values marked at each end
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::uint32_t* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    for (int w = 0; w < ways; ++w) {
        const std::size_t huge_before = huge_bytes();
        char* host = nullptr;
        {
            const tutorial::During during(steps[w].get);
            host = get_pinned(static_cast<Way>(w), bytes, threads);
        }
        if (w == register_huge) found.huge = huge_bytes() - std::min(huge_before, huge_bytes());
        cudaPointerAttributes attributes{};
        CUDA_CHECK(cudaPointerGetAttributes(&attributes, host));
        found.pinned = found.pinned && attributes.type == cudaMemoryTypeHost;
        auto* values = reinterpret_cast<std::uint32_t*>(host);
        fill_on_host(values, marked, 31);
        fill_on_host(values + count - marked, marked, 32);
        {
            const tutorial::During during(steps[w].upload);
            CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, nullptr));
        }
        found.wrong += mismatches_on_device(device, marked, 31) +
                       mismatches_on_device(device + count - marked, marked, 32);
        {
            const tutorial::During during(steps[w].give);
            give_back(static_cast<Way>(w), host, bytes);
        }
    }
    CUDA_CHECK(cudaFree(device));
    return found;
}

constexpr std::size_t huge_page = 2 << 20;

// Anonymous memory at a 2 MiB boundary, so that huge pages can back all of it.
char* map_aligned(std::size_t bytes) {
    void* raw = mmap(nullptr, bytes + huge_page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        std::fprintf(stderr, "mmap of %zu bytes failed\n", bytes);
        std::exit(1);
    }
    const auto start = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t aligned = (start + huge_page - 1) / huge_page * huge_page;
    if (aligned > start) munmap(raw, aligned - start);
    const std::uintptr_t end = start + bytes + huge_page;
    if (end > aligned + bytes)
        munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
    return reinterpret_cast<char*>(aligned);
}

// One write per 4 KiB page: the kernel supplies (and zeroes) each page on its first touch.
void touch(char* p, std::size_t bytes, int threads) {
    std::vector<std::thread> workers;
    const std::size_t slice = (bytes / threads + 4095) / 4096 * 4096;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([=] {
            const std::size_t begin = std::min(bytes, t * slice);
            const std::size_t end = std::min(bytes, begin + slice);
            for (std::size_t at = begin; at < end; at += 4096) p[at] = 1;
        });
    }
    for (std::thread& w : workers) w.join();
}

// Pinning a large buffer fast: memory of our own, at a 2 MiB boundary so that huge pages
// can back it (if the kernel's mode allows), its pages supplied by several threads at once, and
// only then pinned where it is. cudaMallocHost would do all of that in one thread, 4 KiB at a time.
char* pin_large(std::size_t bytes, int threads, bool huge_pages) {
    char* host = map_aligned(bytes);
    if (huge_pages) madvise(host, bytes, MADV_HUGEPAGE);
    touch(host, bytes, threads);
    CUDA_CHECK(cudaHostRegister(host, bytes, cudaHostRegisterDefault));
    return host;
}

void unpin_large(char* host, std::size_t bytes) {
    CUDA_CHECK(cudaHostUnregister(host));
    munmap(host, bytes);
}

char* get_pinned(Way way, std::size_t bytes, int threads) {
    char* host = nullptr;
    if (way == malloc_host) {
        CUDA_CHECK(cudaMallocHost(&host, bytes));
    } else {
        host = pin_large(bytes, way == register_one ? 1 : threads, way == register_huge);
    }
    return host;
}

void give_back(Way way, char* host, std::size_t bytes) {
    if (way == malloc_host) {
        CUDA_CHECK(cudaFreeHost(host));
    } else {
        unpin_large(host, bytes);
    }
}

// Bytes of this process's memory backed by transparent huge pages: AnonHugePages in
// /proc/self/smaps_rollup (Linux).
std::size_t huge_bytes() {
    std::FILE* rollup = std::fopen("/proc/self/smaps_rollup", "r");
    if (rollup == nullptr) return 0;
    char line[256];
    std::size_t kib = 0;
    while (std::fgets(line, sizeof line, rollup) != nullptr) {
        if (std::sscanf(line, "AnonHugePages: %zu kB", &kib) == 1) break;
    }
    std::fclose(rollup);
    return kib * 1024;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const int threads =
        std::max(1, std::min(16, static_cast<int>(std::thread::hardware_concurrency())));
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    Found found{true, 0, 0};
    for (int round = 0; round < 3; ++round) {  // three rounds: the answer is their medians
        const Found f = walkthrough(std::size_t{1} << 30, threads);
        found.pinned = found.pinned && f.pinned;
        found.wrong += f.wrong;
        found.huge = f.huge;
    }
    times.print();
    std::printf("1 GiB pinned 4 ways (T = %d threads), 3 times: pinned every time: %s; %zu marked "
                "values wrong; %zu MiB on huge pages\n",
                threads, found.pinned ? "yes" : "NO", found.wrong, found.huge >> 20);
    // The answer: what getting 1 GiB of pinned memory cost each way (ms per GiB, here 1 GiB).
    const double malloc_host_ms = times.median_host_ms(steps[malloc_host].get);
    const double threads_ms = times.median_host_ms(steps[register_threads].get);
    const double huge_ms = times.median_host_ms(steps[register_huge].get);
    std::printf("1 GiB: touching the pages on %d threads and then cudaHostRegister took %.1f ms "
                "against %.1f for cudaMallocHost: %.2fx faster; huge pages %.2fx cheaper still\n",
                threads, threads_ms, malloc_host_ms, malloc_host_ms / threads_ms,
                threads_ms / huge_ms);
    return found.pinned && found.wrong == 0 ? 0 : 1;
}
#endif
