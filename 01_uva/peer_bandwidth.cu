// Section peer_bandwidth (2 or more GPUs): how fast data moves between GPUs, with and without peer
// access, and how such copies are timed: the way NVIDIA's nvbandwidth does it, a kernel holding the
// stream until every copy is queued. (checks/peer_bandwidth.cu times every pair and judges them.)
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/timing.hpp"

#include <cstdint>
#include <vector>

namespace {

// Step 1. Peer access from every GPU to every other, or none: with it, a copy between two GPUs goes
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

// Step 2. One copy from GPU `from` to GPU `to`, queued on a stream of the sending GPU.
void copy_peer(const std::vector<std::uint32_t*>& receive, const std::vector<std::uint32_t*>& send,
               int from, int to, std::size_t bytes, cudaStream_t stream) {
    CUDA_CHECK(cudaMemcpyPeerAsync(receive[to], to, send[from], from, bytes, stream));
}

// Step 3. Timing copies without timing the CPU: a kernel spins until the host sets *release
// (pinned host memory, which every GPU can read under unified addressing), so that everything
// queued behind it on the stream starts at once. It gives up after a deadline and says so, so
// that a host that never releases it cannot hang the GPU.
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

// The flag the host raises once every copy is queued, and whether a hold ever timed out. Under
// compute-sanitizer, which may wait for each kernel before the next call returns, nothing is held.
struct Hold {
    int* release = nullptr;
    int* timed_out = nullptr;
    bool enabled = true;
    void start(cudaStream_t stream) const {
        if (!enabled) return;
        *static_cast<volatile int*>(release) = 0;  // volatile: a store the GPU must see
        hold_stream<<<1, 1, 0, stream>>>(
            release, static_cast<unsigned long long>(hold_timeout_ms * 1e6), timed_out);
        CUDA_CHECK_LAUNCH();
    }
    void end() const {
        if (enabled) *static_cast<volatile int*>(release) = 1;
    }
};

// The flag and the time-out mark live in cudaMallocHost memory: pinned, so every GPU reads them
// at the address the CPU writes.
void allocate_hold(Hold& hold) {
    CUDA_CHECK(cudaMallocHost(&hold.release, sizeof(int)));
    CUDA_CHECK(cudaMallocHost(&hold.timed_out, sizeof(int)));
    *hold.timed_out = 0;
}

void free_hold(const Hold& hold) {
    CUDA_CHECK(cudaFreeHost(hold.release));
    CUDA_CHECK(cudaFreeHost(hold.timed_out));
}

struct Buffers {
    std::vector<std::uint32_t*> send, receive;  // per GPU: what it sends, where it receives
    std::size_t count;
};

// Step 4. One direction, GPU `from` to GPU `to`, on a stream of `from` (its copy engine pushes the
// data): `copies` back-to-back copies of `bytes` per round, median milliseconds per copy.
double one_way_ms(const Buffers& b, int from, int to, std::size_t bytes, int copies, int runs,
                  const Hold& hold) {
    CUDA_CHECK(cudaSetDevice(from));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    tutorial::EventTimer timer(stream);
    const double ms = tutorial::median_ms(1, runs, [&] {
        hold.start(stream);
        timer.start();
        for (int c = 0; c < copies; ++c) {
            copy_peer(b.receive, b.send, from, to, bytes, stream);
        }
        timer.stop();
        hold.end();
        return timer.elapsed_ms() / copies;
    });
    CUDA_CHECK(cudaStreamDestroy(stream));
    return ms;
}

// Step 5. Both directions at once: GPU a pushes to b on a stream of a while b pushes to a on a
// stream of b. b's stream waits for an event of a's stream, so both start when the hold ends, and
// a's stream waits for b's copies, so that a's two events span both directions. Median ms per
// round.
double both_ways_ms(const Buffers& b, int a, int c, std::size_t bytes, int copies, int runs,
                    const Hold& hold) {
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
        hold.start(on_a);
        timer.start();
        CUDA_CHECK(cudaEventRecord(go, on_a));
        CUDA_CHECK(cudaStreamWaitEvent(on_c, go, 0));  // events work across devices
        for (int k = 0; k < copies; ++k) {
            copy_peer(b.receive, b.send, a, c, bytes, on_a);
            copy_peer(b.receive, b.send, c, a, bytes, on_c);
        }
        CUDA_CHECK(cudaEventRecord(c_done, on_c));
        CUDA_CHECK(cudaStreamWaitEvent(on_a, c_done, 0));
        timer.stop();
        hold.end();
        return timer.elapsed_ms();
    });
    CUDA_CHECK(cudaStreamDestroy(on_a));
    CUDA_CHECK(cudaEventDestroy(go));
    CUDA_CHECK(cudaSetDevice(c));
    CUDA_CHECK(cudaStreamDestroy(on_c));
    CUDA_CHECK(cudaEventDestroy(c_done));
    return ms;
}

// Step 6. A kernel on GPU `from` adds up GPU `to`'s buffer through its pointer (peer access
// enabled).
double kernel_read_ms(const Buffers& b, int from, int to, int runs) {
    CUDA_CHECK(cudaSetDevice(from));
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    const double ms = tutorial::median_event_ms(1, runs, [&] {
        CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof *sum, nullptr));
        sum_on_device_async(b.send[to], b.count, sum, nullptr);
    });
    CUDA_CHECK(cudaFree(sum));
    return ms;
}

}  // namespace
