// Section peer_access (2 or more GPUs): a pointer from one GPU's cudaMalloc is a valid address on
// every GPU, but another GPU's kernels may use it only once cudaDeviceEnablePeerAccess has mapped
// it. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 01_uva/peer_access.cu common/standalone.cu -o build/peer_access
//   (or in 01_uva/: nvcc -std=c++17 -I.. peer_access.cu ../common/standalone.cu
//       -o ../build/peer_access)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <vector>

namespace {

constexpr std::uint32_t seed = 11;
constexpr int adds_per_thread = 1000;
constexpr int counter_threads = 256;

// Can GPU `from` reach GPU `to`'s memory, how well, with native atomics?
struct PairFacts {
    int from, to;            // a kernel on GPU `from` uses memory of GPU `to`
    int can_access = 0;      // cudaDeviceCanAccessPeer
    int rank = 0;            // cudaDevP2PAttrPerformanceRank
    int native_atomics = 0;  // cudaDevP2PAttrNativeAtomicSupported
    std::size_t wrong = 0;   // values wrong after the kernel copied the peer's buffer
};

PairFacts pair_facts(int from, int to) {
    PairFacts p{from, to};
    CUDA_CHECK(cudaDeviceCanAccessPeer(&p.can_access, from, to));
    CUDA_CHECK(cudaDeviceGetP2PAttribute(&p.rank, cudaDevP2PAttrPerformanceRank, from, to));
    CUDA_CHECK(cudaDeviceGetP2PAttribute(&p.native_atomics, cudaDevP2PAttrNativeAtomicSupported,
                                         from, to));
    return p;
}

__global__ void read_all(const std::uint32_t* from, std::uint32_t* to, std::size_t n) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        to[i] = from[i];
    }
}

// With peer access enabled from `p.from` to `p.to`, a kernel on p.from copies p.to's whole buffer
// into p.from's own memory, where a kernel of p.from checks it.
void read_through_peer(PairFacts& p, const std::vector<std::uint32_t*>& buffers,
                       std::size_t count) {
    CUDA_CHECK(cudaSetDevice(p.from));
    CUDA_CHECK(cudaDeviceEnablePeerAccess(p.to, 0));
    std::uint32_t* local = nullptr;
    CUDA_CHECK(cudaMalloc(&local, count * sizeof *local));
    read_all<<<1024, 256>>>(buffers[p.to], local, count);
    CUDA_CHECK_LAUNCH_SYNC();
    p.wrong = mismatches_on_device(local, count, seed + p.to);
    CUDA_CHECK(cudaFree(local));
    CUDA_CHECK(cudaDeviceDisablePeerAccess(p.to));
}

// Every thread adds 1 to a counter that may live on another GPU, adds_per_thread times. System
// scope makes the additions atomic across GPUs too (a plain atomicAdd is atomic for one GPU).
__global__ void add_to_counter(unsigned long long* counter) {
    for (int k = 0; k < adds_per_thread; ++k) atomicAdd_system(counter, 1ull);
}

// Every GPU that can reach GPU 0 adds to one counter in GPU 0's memory, all at once, one block
// per SM of each GPU (asked of the device). The total, and what it should be.
struct Counted {
    unsigned long long total = 0, expected = 0;
};

Counted count_on_gpu0(int gpus) {
    Counted c;
    std::vector<int> adders = {0};
    for (int g = 1; g < gpus; ++g) {
        int can = 0;
        CUDA_CHECK(cudaDeviceCanAccessPeer(&can, g, 0));
        if (can == 1) adders.push_back(g);
    }
    unsigned long long* counter = nullptr;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMalloc(&counter, sizeof *counter));
    CUDA_CHECK(cudaMemset(counter, 0, sizeof *counter));
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int g : adders) {  // launched back to back, so the kernels overlap
        CUDA_CHECK(cudaSetDevice(g));
        if (g > 0) CUDA_CHECK(cudaDeviceEnablePeerAccess(0, 0));
        int sms = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g));
        add_to_counter<<<sms, counter_threads>>>(counter);
        CUDA_CHECK_LAUNCH();
        c.expected += static_cast<unsigned long long>(sms) * counter_threads * adds_per_thread;
    }
    for (int g : adders) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaDeviceSynchronize());
        if (g > 0) CUDA_CHECK(cudaDeviceDisablePeerAccess(0));
    }
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMemcpy(&c.total, counter, sizeof c.total, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(counter));
    return c;
}

// What the walkthrough found.
struct Found {
    std::vector<PairFacts> pairs;  // every ordered pair of GPUs
    Counted counter;
};

Found walkthrough(int gpus, std::size_t count) {
    Found found;
    // 1. Every GPU gets a buffer from cudaMalloc, filled with a pattern of its own.
    std::vector<std::uint32_t*> buffers(gpus, nullptr);
    for (int g = 0; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMalloc(&buffers[g], count * sizeof(std::uint32_t)));
        fill_on_device(buffers[g], count, seed + g);
    }
    // 2. Every ordered pair: what the driver says about it, and where cudaDeviceCanAccessPeer
    //    says 1, peer access enabled and a kernel on the first GPU reading the second's buffer
    //    through its pointer.
    for (int from = 0; from < gpus; ++from) {
        for (int to = 0; to < gpus; ++to) {
            if (from == to) continue;
            found.pairs.push_back(pair_facts(from, to));
            if (found.pairs.back().can_access == 1)
                read_through_peer(found.pairs.back(), buffers, count);
        }
    }
    // 3. Every GPU at once adds to one counter in GPU 0's memory.
    found.counter = count_on_gpu0(gpus);
    // 4. Each buffer freed on its own GPU.
    for (int g = 0; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaFree(buffers[g]));
    }
    return found;
}

// The calls the entries refuse, on GPUs a and b. No CUDA_CHECK: what they return is the lesson.
struct Refusals {
    cudaError_t asked;          // cudaDeviceCanAccessPeer(&can, a, a)...
    int can;                    // ...and what it passed back
    cudaError_t never_enabled;  // disabling what was never enabled
    cudaError_t itself;         // enabling peer access to one's own device
    cudaError_t first, again;   // enabling peer access to b, twice
};

Refusals refused_calls(int a, int b) {
    Refusals r{};
    r.can = -1;
    CUDA_CHECK(cudaSetDevice(a));
    r.asked = cudaDeviceCanAccessPeer(&r.can, a, a);
    r.never_enabled = cudaDeviceDisablePeerAccess(b);
    r.itself = cudaDeviceEnablePeerAccess(a, 0);
    r.first = cudaDeviceEnablePeerAccess(b, 0);
    r.again = cudaDeviceEnablePeerAccess(b, 0);
    (void)cudaGetLastError();  // the refused calls also left their error as the last one
    return r;
}

// The mistake: a kernel on GPU a reads GPU b's buffer through its pointer with no peer access.
// What happens is outside the contract; where it fails, CUDA_CHECK_LAUNCH_SYNC reports the error
// and ends the program.
void read_without_peer_access(int a, int b, std::size_t count) {
    std::uint32_t* remote = nullptr;
    std::uint32_t* local = nullptr;
    CUDA_CHECK(cudaSetDevice(b));
    CUDA_CHECK(cudaMalloc(&remote, count * sizeof *remote));
    fill_on_device(remote, count, seed);
    CUDA_CHECK(cudaSetDevice(a));
    CUDA_CHECK(cudaMalloc(&local, count * sizeof *local));
    read_all<<<1024, 256>>>(remote, local, count);
    CUDA_CHECK_LAUNCH_SYNC();
    CUDA_CHECK(cudaFree(local));
    CUDA_CHECK(cudaSetDevice(b));
    CUDA_CHECK(cudaFree(remote));
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
#include <cstring>

#include "common/device.hpp"

// `peer_access mistake` ends with the mistake: a kernel reading another GPU's memory with no
// peer access.
int main(int argc, char** argv) {
    const int gpus = tutorial::device_count();
    if (gpus < 2) {
        std::printf("SKIP: peer_access: peer access needs 2 GPUs; this machine has %d\n", gpus);
        return 77;  // as the course says a missing GPU
    }
    const std::size_t count = std::size_t{16} << 20;
    const Found found = walkthrough(gpus, count);
    for (const PairFacts& p : found.pairs) {
        std::printf("a kernel on GPU %d, memory of GPU %d: cudaDeviceCanAccessPeer %d, ", p.from,
                    p.to, p.can_access);
        if (p.can_access == 1)
            std::printf("%zu of %zu values read wrong\n", p.wrong, count);
        else
            std::printf("not tried\n");
    }
    std::printf("the counter in GPU 0's memory: %llu, expected %llu\n", found.counter.total,
                found.counter.expected);
    const Refusals r = refused_calls(0, 1);
    std::printf(
        "disabling what was never enabled: %s; enabling for its own device: %s; "
        "enabling twice: %s\n",
        cudaGetErrorName(r.never_enabled), cudaGetErrorName(r.itself), cudaGetErrorName(r.again));
    if (r.first == cudaSuccess) CUDA_CHECK(cudaDeviceDisablePeerAccess(1));  // GPU 0 is current
    if (argc > 1 && std::strcmp(argv[1], "mistake") == 0) {
        std::printf("a kernel on GPU 0 reads GPU 1's buffer, without peer access...\n");
        std::fflush(stdout);
        read_without_peer_access(0, 1, count);
        std::printf("the kernel finished\n");
    }
    return 0;
}
#endif
