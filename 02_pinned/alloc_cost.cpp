// Section alloc_cost: what getting pinned memory and giving it back costs, three ways against
// malloc, and after how many transfers pinning pays for itself (checks/alloc_cost.cpp).
#include "common/check.hpp"
#include "common/timing.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// Step 1. Getting pinned memory and giving it back, three ways (plain malloc and free are the
// yardstick). Pinning costs the OS work per page, on the way in and on the way out.
void* allocate_pinned(std::size_t bytes) {
    void* p = nullptr;
    CUDA_CHECK(cudaMallocHost(&p, bytes));
    return p;
}

void* allocate_write_combined(std::size_t bytes) {
    void* p = nullptr;
    CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocWriteCombined));
    return p;
}

void free_pinned(void* p) {
    CUDA_CHECK(cudaFreeHost(p));
}

// Memory the program already has, pinned where it is, and later unpinned (then still usable).
void pin(void* p, std::size_t bytes) {
    CUDA_CHECK(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
}

void unpin(void* p) {
    CUDA_CHECK(cudaHostUnregister(p));
}

// Step 2. Whether CUDA knows the memory as (pinned) host memory.
bool is_pinned(const void* pointer) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    return attributes.type == cudaMemoryTypeHost;
}

// Step 3. One way, timed on the host: medians of `runs` rounds (after one warm-up) of `acquire`
// and `release`; `acquire` returns the pointer it made, which `release` gets back.
struct Cost {
    double acquire_ms = 0.0;     // allocate, or pin
    double release_ms = 0.0;     // free, or unpin
    bool known_to_cuda = false;  // cudaPointerGetAttributes said "host" every time it was held
};

template <typename Acquire, typename Release>
Cost measure(int runs, Acquire acquire, Release release) {
    std::vector<double> acquired;
    std::vector<double> released;
    Cost cost;
    cost.known_to_cuda = true;
    for (int run = 0; run <= runs; ++run) {
        tutorial::HostTimer timer;
        void* p = acquire();
        const double a = timer.elapsed_ms();
        cost.known_to_cuda = cost.known_to_cuda && is_pinned(p);
        timer.restart();
        release(p);
        const double r = timer.elapsed_ms();
        if (run > 0) {
            acquired.push_back(a);
            released.push_back(r);
        }
    }
    cost.acquire_ms = tutorial::median(acquired);
    cost.release_ms = tutorial::median(released);
    return cost;
}

void* checked_malloc(std::size_t bytes) {
    void* p = std::malloc(bytes);
    if (p == nullptr) {
        std::fprintf(stderr, "malloc of %zu bytes failed\n", bytes);
        std::exit(1);
    }
    return p;
}

// Step 4. Every way of getting `bytes` of host memory. Registration is measured on `touched`,
// memory that is already allocated and touched: that part is paid by any program that has the
// data in memory at all.
struct Costs {
    Cost plain, malloc_host, host_alloc_wc, registration;
    bool forgotten_after_unregister = true;  // unregistered memory is unknown to CUDA again
};

Costs measure_costs(std::size_t bytes, int runs, void* touched) {
    Costs c;
    c.plain = measure(
        runs,
        [&] {
            void* p = checked_malloc(bytes);
            std::memset(p, 1, bytes);  // the OS supplies pages on first touch
            return p;
        },
        [](void* p) { std::free(p); });
    c.malloc_host = measure(
        runs, [&] { return allocate_pinned(bytes); }, [](void* p) { free_pinned(p); });
    c.host_alloc_wc = measure(
        runs, [&] { return allocate_write_combined(bytes); }, [](void* p) { free_pinned(p); });
    c.registration = measure(
        runs,
        [&] {
            pin(touched, bytes);
            return touched;
        },
        [&](void* p) {
            unpin(p);
            c.forgotten_after_unregister = c.forgotten_after_unregister && !is_pinned(p);
        });
    return c;
}

// Step 5. What pinning buys: one upload of the same memory, before and after pinning it
// (events, 1 warm-up, median of `runs`).
struct Uploads {
    double pageable_ms, pinned_ms;
};

Uploads time_uploads(std::size_t bytes, int runs, void* touched) {
    void* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    const auto upload = [&] {
        CUDA_CHECK(cudaMemcpy(device, touched, bytes, cudaMemcpyHostToDevice));
    };
    Uploads u{};
    u.pageable_ms = tutorial::median_event_ms(1, runs, upload);
    pin(touched, bytes);
    u.pinned_ms = tutorial::median_event_ms(1, runs, upload);
    unpin(touched);
    CUDA_CHECK(cudaFree(device));
    return u;
}

}  // namespace
