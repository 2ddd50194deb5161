// Section pinning_at_scale: pinning gigabytes. cudaMallocHost gets, zeroes and pins each 4 KiB page
// on one thread; pages touched by many threads, on huge pages, then registered pin much faster.
#include <sys/mman.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include "common/check.hpp"

namespace {

constexpr std::size_t huge_page = 2 << 20;

// Step 1. Anonymous memory at a 2 MiB boundary, so that huge pages can back all of it.
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

// Step 2. One write per 4 KiB page: the kernel supplies (and zeroes) each page on its first touch.
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

// Step 3. Pinning a large buffer fast: memory of our own, at a 2 MiB boundary so that huge pages
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

// Step 4. The four ways compared: cudaMallocHost as usual, and pin_large touching on one thread,
// on T threads, and on T threads with huge pages.
enum Way { malloc_host, register_one, register_threads, register_huge, ways };

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

}  // namespace
