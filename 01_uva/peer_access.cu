// Section peer_access (2 or more GPUs): a pointer from one GPU's cudaMalloc is a valid address on
// every GPU, but another GPU's kernels may use it only once cudaDeviceEnablePeerAccess has mapped
// it. (checks/peer_access.cu runs every pair, the refusals and a too-early read in child
// processes.)
#include "common/check.hpp"
#include "common/patterns.hpp"

#include <cstdint>

namespace {

constexpr std::size_t count = 16 << 20;  // 64 MiB of 32-bit words per GPU
constexpr std::uint32_t seed = 11;
constexpr int adds_per_thread = 1000;
constexpr int counter_blocks = 132;  // one per SM of an H100 or H200
constexpr int counter_threads = 256;

// Step 1. Can GPU `from` reach GPU `to`'s memory, how well, with native atomics?
struct PairFacts {
    int from, to;            // a kernel on GPU `from` uses memory of GPU `to`
    int can_access = 0;      // cudaDeviceCanAccessPeer
    int rank = 0;            // cudaDevP2PAttrPerformanceRank
    int native_atomics = 0;  // cudaDevP2PAttrNativeAtomicSupported
    std::size_t wrong = 0;   // values wrong after the kernel copied the peer's buffer (Step 2)
};

PairFacts pair_facts(int from, int to) {
    PairFacts p{from, to};
    CUDA_CHECK(cudaDeviceCanAccessPeer(&p.can_access, from, to));
    CUDA_CHECK(cudaDeviceGetP2PAttribute(&p.rank, cudaDevP2PAttrPerformanceRank, from, to));
    CUDA_CHECK(cudaDeviceGetP2PAttribute(&p.native_atomics, cudaDevP2PAttrNativeAtomicSupported,
                                         from, to));
    return p;
}

// Step 2. With peer access enabled from `p.from` to `p.to`, a kernel on p.from copies p.to's whole
// buffer into p.from's own memory, where a kernel of p.from checks it.
__global__ void read_all(const std::uint32_t* from, std::uint32_t* to, std::size_t n) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        to[i] = from[i];
    }
}

void read_through_peer(PairFacts& p, std::uint32_t* const* buffers) {
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

// Step 3. Every thread adds 1 to a counter that may live on another GPU, adds_per_thread times.
// System scope makes the additions atomic across GPUs too (a plain atomicAdd is atomic for one
// GPU).
__global__ void add_to_counter(unsigned long long* counter) {
    for (int k = 0; k < adds_per_thread; ++k) atomicAdd_system(counter, 1ull);
}

// Every GPU adds to one counter in GPU 0's memory at the same time. Returns the total.
unsigned long long count_on_gpu0(int gpus, unsigned long long& expected) {
    unsigned long long* counter = nullptr;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMalloc(&counter, sizeof *counter));
    CUDA_CHECK(cudaMemset(counter, 0, sizeof *counter));
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int g = 1; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaDeviceEnablePeerAccess(0, 0));
    }
    for (int g = 0; g < gpus; ++g) {  // launched back to back, so the kernels overlap
        CUDA_CHECK(cudaSetDevice(g));
        add_to_counter<<<counter_blocks, counter_threads>>>(counter);
        CUDA_CHECK_LAUNCH();
    }
    for (int g = 0; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaDeviceSynchronize());
        if (g > 0) CUDA_CHECK(cudaDeviceDisablePeerAccess(0));
    }
    CUDA_CHECK(cudaSetDevice(0));
    unsigned long long total = 0;
    CUDA_CHECK(cudaMemcpy(&total, counter, sizeof total, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(counter));
    expected =
        static_cast<unsigned long long>(gpus) * counter_blocks * counter_threads * adds_per_thread;
    return total;
}

// Step 4. The calls the entries refuse, on GPUs a and b. No CUDA_CHECK: what they return is the
// lesson.
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

}  // namespace
