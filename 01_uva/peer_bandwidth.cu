// Section peer_bandwidth (2 or more GPUs): how fast data moves between GPUs, with and without peer
// access, timed the way NVIDIA's nvbandwidth times copies: a kernel holds the stream until every
// copy is queued, so that the events time the copies, not the CPU queuing them. Alone:
//   nvcc -std=c++17 -I. 01_uva/peer_bandwidth.cu common/standalone.cu -o build/peer_bandwidth
//   (or in 01_uva/: nvcc -std=c++17 -I.. peer_bandwidth.cu ../common/standalone.cu
//       -o ../build/peer_bandwidth)  (on the same line)
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <cstdint>
#include <vector>

namespace {

constexpr std::uint32_t seed = 21;

// Peer access from every GPU to every other, or none: with it, a copy between two GPUs goes
// straight over their link; without it, the driver stages it through host memory.
void set_peer_access(int gpus, bool enable) {
    for (int from = 0; from < gpus; ++from) {
        CUDA_CHECK(cudaSetDevice(from));
        for (int to = 0; to < gpus; ++to) {
            if (to == from) continue;
            if (enable) {
                CUDA_CHECK(cudaDeviceEnablePeerAccess(to, 0));
            } else {
                CUDA_CHECK(cudaDeviceDisablePeerAccess(to));
            }
        }
    }
}

// The hold: a kernel spins until the host sets *release (pinned host memory, which every GPU can
// read under unified addressing), so that everything queued behind it on the stream starts at
// once. It gives up after a deadline and says so, so that a host that never releases it cannot
// hang the GPU.
constexpr double hold_timeout_ms = 2000.0;

__global__ void hold_stream(const volatile int* release, unsigned long long timeout_ns,
                            int* timed_out) {
    const unsigned long long until = tutorial::global_nanoseconds() + timeout_ns;
    while (*release == 0) {
        if (tutorial::global_nanoseconds() > until) {
            *timed_out = 1;
            return;
        }
        __nanosleep(200);
    }
}

// The flag the host raises once every copy is queued, and the mark of a hold that timed out,
// both in cudaMallocHost memory: pinned, so every GPU reads them at the address the CPU writes.
struct Hold {
    int* release = nullptr;
    int* timed_out = nullptr;
    void start(cudaStream_t stream) const {
        *static_cast<volatile int*>(release) = 0;  // volatile: a store the GPU must see
        hold_stream<<<1, 1, 0, stream>>>(
            release, static_cast<unsigned long long>(hold_timeout_ms * 1e6), timed_out);
        CUDA_CHECK_LAUNCH();
    }
    void end() const { *static_cast<volatile int*>(release) = 1; }
};

// Each GPU's buffers: what it sends, where it receives.
struct Buffers {
    std::vector<std::uint32_t*> send, receive;
    std::size_t bytes;
};

// One direction, GPU `from` to GPU `to`, on a stream of `from` (its copy engine pushes the data):
// `copies` back-to-back cudaMemcpyPeerAsync of `bytes`, behind the hold where one is given; the
// median of `runs` rounds, in milliseconds per copy.
double one_way_ms(const Buffers& b, int from, int to, std::size_t bytes, int copies, int runs,
                  const Hold* hold) {
    CUDA_CHECK(cudaSetDevice(from));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    tutorial::EventTimer timer(stream);
    const double ms = tutorial::median_ms(1, runs, [&] {
        if (hold != nullptr) hold->start(stream);
        timer.start();
        for (int c = 0; c < copies; ++c)
            CUDA_CHECK(cudaMemcpyPeerAsync(b.receive[to], to, b.send[from], from, bytes, stream));
        timer.stop();
        if (hold != nullptr) hold->end();
        return timer.elapsed_ms() / copies;
    });
    CUDA_CHECK(cudaStreamDestroy(stream));
    return ms;
}

// Both directions at once: GPU a pushes to c on a stream of a while c pushes to a on a stream of
// c. c's stream waits for an event of a's stream, so both start when the hold ends, and a's stream
// waits for c's copies, so that a's two events span both directions. Median ms per round.
double both_ways_ms(const Buffers& b, int a, int c, int copies, int runs, const Hold* hold) {
    cudaStream_t on_a = nullptr, on_c = nullptr;
    cudaEvent_t go = nullptr, c_done = nullptr;
    CUDA_CHECK(cudaSetDevice(c));
    CUDA_CHECK(cudaStreamCreateWithFlags(&on_c, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&c_done, cudaEventDisableTiming));
    CUDA_CHECK(cudaSetDevice(a));
    CUDA_CHECK(cudaStreamCreateWithFlags(&on_a, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&go, cudaEventDisableTiming));
    tutorial::EventTimer timer(on_a);
    const double ms = tutorial::median_ms(1, runs, [&] {
        if (hold != nullptr) hold->start(on_a);
        timer.start();
        CUDA_CHECK(cudaEventRecord(go, on_a));
        CUDA_CHECK(cudaStreamWaitEvent(on_c, go, 0));  // events work across devices
        for (int k = 0; k < copies; ++k) {
            CUDA_CHECK(cudaMemcpyPeerAsync(b.receive[c], c, b.send[a], a, b.bytes, on_a));
            CUDA_CHECK(cudaMemcpyPeerAsync(b.receive[a], a, b.send[c], c, b.bytes, on_c));
        }
        CUDA_CHECK(cudaEventRecord(c_done, on_c));
        CUDA_CHECK(cudaStreamWaitEvent(on_a, c_done, 0));
        timer.stop();
        if (hold != nullptr) hold->end();
        return timer.elapsed_ms();
    });
    CUDA_CHECK(cudaStreamDestroy(on_a));
    CUDA_CHECK(cudaEventDestroy(go));
    CUDA_CHECK(cudaSetDevice(c));
    CUDA_CHECK(cudaStreamDestroy(on_c));
    CUDA_CHECK(cudaEventDestroy(c_done));
    return ms;
}

// A kernel on GPU `from` adds up GPU `to`'s buffer in place, through its pointer (peer access
// enabled). Median ms of `runs`.
double kernel_read_ms(const Buffers& b, int from, int to, int runs) {
    CUDA_CHECK(cudaSetDevice(from));
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    const double ms = tutorial::median_event_ms(1, runs, [&] {
        CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof *sum, nullptr));
        sum_on_device_async(b.send[to], b.bytes / sizeof(std::uint32_t), sum, nullptr);
    });
    CUDA_CHECK(cudaFree(sum));
    return ms;
}

// What the walkthrough found for one ordered pair of GPUs.
struct PairRates {
    int from, to;
    double staged = 0, staged_both = 0;  // GB/s without peer access: one way, both ways in total
    double peer = 0, peer_both = 0;      // ...with peer access
    double small_us = 0;                 // microseconds per 4-byte copy, with peer access
    double kernel = 0;                   // a kernel on `from` reading `to`'s memory, GB/s
};

struct Found {
    std::vector<PairRates> pairs;  // every ordered pair
    std::size_t wrong = 0;         // values wrong after the copies, over every check
    int timed_out = 0;             // holds that gave up before the host released them
};

// Values wrong in GPU `to`'s receive buffer, which should hold GPU `from`'s data.
std::size_t arrived_wrong(const Buffers& b, int from, int to) {
    CUDA_CHECK(cudaSetDevice(to));
    return mismatches_on_device(b.receive[to], b.bytes / sizeof(std::uint32_t), seed + from);
}

// One pair, staged or with peer access. Staged copies take ten times longer, so two a round are
// enough and the time the CPU takes to queue them does not matter. They are not held: the runtime
// may wait inside the call for work queued before it, which would wait for the hold, which waits
// for the CPU.
void measure_pair(PairRates& p, const Buffers& b, bool peer, int copies, int runs, const Hold* hold,
                  Found& found) {
    const int n = peer ? copies : 2;
    const Hold* h = peer ? hold : nullptr;
    (peer ? p.peer : p.staged) =
        tutorial::gb_per_s(b.bytes, one_way_ms(b, p.from, p.to, b.bytes, n, runs, h));
    found.wrong += arrived_wrong(b, p.from, p.to);
    if (p.from < p.to) {  // both ways once per pair
        (peer ? p.peer_both : p.staged_both) =
            tutorial::gb_per_s(2 * n * b.bytes, both_ways_ms(b, p.from, p.to, n, runs, h));
        found.wrong += arrived_wrong(b, p.from, p.to) + arrived_wrong(b, p.to, p.from);
    }
    if (!peer) return;
    p.small_us = 1e3 * one_way_ms(b, p.from, p.to, 4, 100, runs, hold);  // 4 bytes: the latency
    p.kernel = tutorial::gb_per_s(b.bytes, kernel_read_ms(b, p.from, p.to, runs));
}

// `hold_streams`: time the copies behind the hold (false: the events also time the CPU queuing
// them, as a plain loop of copies does).
Found walkthrough(int gpus, std::size_t bytes, int copies, int runs, bool hold_streams) {
    Found found;
    // 1. Each GPU gets a buffer to send from, filled with its own pattern, and one to receive in.
    Buffers b{std::vector<std::uint32_t*>(gpus), std::vector<std::uint32_t*>(gpus), bytes};
    for (int g = 0; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMalloc(&b.send[g], bytes));
        CUDA_CHECK(cudaMalloc(&b.receive[g], bytes));
        fill_on_device(b.send[g], bytes / sizeof(std::uint32_t), seed + g);
    }
    Hold hold;
    CUDA_CHECK(cudaMallocHost(&hold.release, sizeof(int)));
    CUDA_CHECK(cudaMallocHost(&hold.timed_out, sizeof(int)));
    *hold.timed_out = 0;
    const Hold* held = hold_streams ? &hold : nullptr;
    for (int from = 0; from < gpus; ++from) {
        for (int to = 0; to < gpus; ++to) {
            if (from != to) found.pairs.push_back({from, to});
        }
    }
    // 2. Every ordered pair without peer access: the driver stages each copy through host memory.
    for (PairRates& p : found.pairs) measure_pair(p, b, false, copies, runs, held, found);
    // 3. Peer access enabled every way, and every pair again: now the sending GPU's copy engine
    //    writes straight into the peer's memory; a kernel reads a peer's memory in place.
    set_peer_access(gpus, true);
    for (PairRates& p : found.pairs) measure_pair(p, b, true, copies, runs, held, found);
    set_peer_access(gpus, false);
    // 4. Both ways was measured once per pair: its mirror row shares it.
    for (PairRates& p : found.pairs) {
        for (const PairRates& q : found.pairs) {
            if (q.from == p.to && q.to == p.from && p.from > p.to) {
                p.staged_both = q.staged_both;
                p.peer_both = q.peer_both;
            }
        }
    }
    found.timed_out = *hold.timed_out;
    CUDA_CHECK(cudaFreeHost(hold.release));
    CUDA_CHECK(cudaFreeHost(hold.timed_out));
    for (int g = 0; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaFree(b.send[g]));
        CUDA_CHECK(cudaFree(b.receive[g]));
    }
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>

#include "common/device.hpp"

int main() {
    const int gpus = tutorial::device_count();
    if (gpus < 2) {
        std::printf("SKIP: peer_bandwidth: copies between GPUs need 2 GPUs; this machine has %d\n",
                    gpus);
        return 77;  // as the course says a missing GPU
    }
    const Found found = walkthrough(gpus, std::size_t{64} << 20, 4, 5, true);
    for (const PairRates& p : found.pairs) {
        std::printf(
            "GPU %d -> GPU %d: %.1f GB/s staged, %.1f GB/s with peer access, %.2f us per "
            "4-byte copy\n",
            p.from, p.to, p.staged, p.peer, p.small_us);
    }
    std::printf("%zu values arrived wrong; %d holds timed out\n", found.wrong, found.timed_out);
    return found.wrong == 0 ? 0 : 1;
}
#endif
