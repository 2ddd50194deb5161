// Section async: when cudaMemcpyAsync really is asynchronous (pinned memory) and when it is not
// (pageable memory), then copies and kernels of a chunked pipeline overlapping over K streams.
#include "common/buffer.hpp"
#include "common/check.hpp"
#include "common/timing.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

using tutorial::Buffer;
using tutorial::MemoryKind;

// Step 1. When does cudaMemcpyAsync give the CPU back? A host timer reads when the call returns
// and when cudaStreamSynchronize says the copy is done; one warm-up, then the medians. The stream
// is non-blocking: it never waits for work on the legacy default stream.
struct CallTiming {
    double returned_ms;  // when the cudaMemcpyAsync call gave control back to the CPU
    double finished_ms;  // when the copy itself was done
};

CallTiming time_async_call(void* destination, const void* source, std::size_t bytes, int runs) {
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::vector<double> returned;
    std::vector<double> finished;
    for (int run = 0; run < runs + 1; ++run) {  // the first run is a warm-up
        tutorial::HostTimer timer;
        CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDefault, stream));
        const double back = timer.elapsed_ms();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        if (run > 0) {
            returned.push_back(back);
            finished.push_back(timer.elapsed_ms());
        }
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    return {tutorial::median(returned), tutorial::median(finished)};
}

// Step 2. The pipeline's work: one step of a linear congruential generator, `rounds` times per
// element, integer work whose amount can be dialled, with results the CPU can check exactly.
constexpr std::uint32_t lcg_a = 1664525u;
constexpr std::uint32_t lcg_c = 1013904223u;

__global__ void transform_kernel(const std::uint32_t* in, std::uint32_t* out, std::size_t count,
                                 int rounds) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        std::uint32_t x = in[i];
        for (int r = 0; r < rounds; ++r) x = x * lcg_a + lcg_c;
        out[i] = x;
    }
}

// Step 3. Its four buffers: input and output on the host, pinned (from pageable memory the
// copies could not overlap anything), and their device twins.
struct Pipeline {
    std::size_t count;
    Buffer host_in, host_out, device_in, device_out;
    explicit Pipeline(std::size_t bytes)
        : count(bytes / sizeof(std::uint32_t)),
          host_in(MemoryKind::pinned, bytes),
          host_out(MemoryKind::pinned, bytes),
          device_in(MemoryKind::device, bytes),
          device_out(MemoryKind::device, bytes) {}
    std::uint32_t* in() const { return host_in.as<std::uint32_t>(); }
    std::uint32_t* out() const { return host_out.as<std::uint32_t>(); }
    std::uint32_t* d_in() const { return device_in.as<std::uint32_t>(); }
    std::uint32_t* d_out() const { return device_out.as<std::uint32_t>(); }
};

// Step 4. The streams. Created with the default flag, each waits for the legacy default stream
// and the legacy default stream waits for them: events recorded on it bracket all their work.
std::vector<cudaStream_t> create_streams(int k) {
    std::vector<cudaStream_t> streams(k);
    for (cudaStream_t& stream : streams) CUDA_CHECK(cudaStreamCreate(&stream));
    return streams;
}

// Step 5. The buffer in K chunks: chunk i goes up, through the kernel and back down in stream i,
// so one chunk's kernel can run while the next one uploads and the one before downloads.
void pipeline(const std::uint32_t* in, std::uint32_t* out, std::uint32_t* d_in,
              std::uint32_t* d_out, std::size_t count, const std::vector<cudaStream_t>& streams,
              int k, int rounds) {
    const std::size_t chunk = (count + k - 1) / k;
    for (int i = 0; i < k; ++i) {
        const std::size_t first = i * chunk;
        if (first >= count) break;  // fewer elements than streams
        const std::size_t n = std::min(chunk, count - first);
        CUDA_CHECK(cudaMemcpyAsync(d_in + first, in + first, n * sizeof *in, cudaMemcpyHostToDevice,
                                   streams[i]));
        transform_kernel<<<1024, 256, 0, streams[i]>>>(d_in + first, d_out + first, n, rounds);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(out + first, d_out + first, n * sizeof *out,
                                   cudaMemcpyDeviceToHost, streams[i]));
    }
}

}  // namespace
