// Section async: when cudaMemcpyAsync returns (pinned vs pageable); overlap over K streams.
// Built alone, from the course's folder (mkdir -p build first), then ./build/async:
//   nvcc -std=c++17 -I. 02_pinned/async.cu common/standalone.cu -o build/async
//   (or in 02_pinned/: nvcc -std=c++17 -I.. async.cu ../common/standalone.cu -o ../build/async)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
// Part 1's four copies, each in two steps: until the call gives the CPU back, then until
// cudaStreamSynchronize says the copy is done.
struct Call {
    bool pinned, to_device;
    tutorial::Step call, wait;
};
constexpr Call calls[4] = {
    {false, true, {"pageable host -> device: until the call returns"},
     {"pageable host -> device: then until the copy is done"}},
    {false, false, {"pageable device -> host: until the call returns"},
     {"pageable device -> host: then until the copy is done"}},
    {true, true, {"pinned host -> device: until the call returns"},
     {"pinned host -> device: then until the copy is done"}},
    {true, false, {"pinned device -> host: until the call returns"},
     {"pinned device -> host: then until the copy is done"}},
};
// Part 2: each stage alone on the whole buffer, then the pipeline over K = 1, 2, 4, 8 streams.
constexpr tutorial::Step upload_alone{"the upload alone"};
constexpr tutorial::Step kernel_alone{"the kernel alone"};
constexpr tutorial::Step download_alone{"the download alone"};
constexpr int stream_counts[4] = {1, 2, 4, 8};
constexpr tutorial::Step pipeline_steps[4] = {{"the pipeline over 1 stream"},
                                              {"the pipeline over 2 streams"},
                                              {"the pipeline over 4 streams"},
                                              {"the pipeline over 8 streams"}};

// The pipeline's work: one step of a linear congruential generator, `rounds` times per element,
// integer work whose amount can be dialled, with results the CPU can check exactly.
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

// What the walkthrough found: copies (part 1) and pipeline runs (part 2) whose data was wrong.
struct Found {
    int wrong_copies;
    std::size_t wrong_results;
};

// Below the walkthrough: one copy of part 1 in its two steps (whether all of it arrived), the
// pipeline over K streams, and the CPU's check of the pipeline's results.
bool copy_once(const Call& c, std::uint32_t* host, std::uint32_t* device, std::size_t count,
               std::uint32_t seed, cudaStream_t stream);
void pipeline(const std::uint32_t* in, std::uint32_t* out, std::uint32_t* d_in,
              std::uint32_t* d_out, std::size_t count, const std::vector<cudaStream_t>& streams,
              int k, int rounds);
std::size_t transform_mismatches(const std::uint32_t* in, const std::uint32_t* out,
                                 std::size_t count, int rounds);

// `rounds`: the kernel's work per element; the pipeline runs with K = 1, 2, ... `most_streams`.
Found walkthrough(std::size_t bytes, int rounds, int most_streams) {
    Found found{};
    const std::size_t count = bytes / sizeof(std::uint32_t);
    // Part 1. When does cudaMemcpyAsync give the CPU back? A pageable and a pinned buffer, each
    //    copied both ways in a stream that never waits for the legacy default stream.
    void* pageable = std::malloc(bytes);
    void* pinned = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    std::uint32_t* device = nullptr;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::uint32_t seed = 21;
    for (const Call& c : calls) {
        auto* host = static_cast<std::uint32_t*>(c.pinned ? pinned : pageable);
        found.wrong_copies += copy_once(c, host, device, count, seed++, stream) ? 0 : 1;
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(device));
    CUDA_CHECK(cudaFreeHost(pinned));
    std::free(pageable);

    // Part 2. A chunked pipeline: pinned input and output (from pageable memory the copies could
    //    not overlap anything), their device twins, and streams made with the default flag: each
    //    waits for the legacy default stream and it for them.
    std::uint32_t *in = nullptr, *out = nullptr, *d_in = nullptr, *d_out = nullptr;
    CUDA_CHECK(cudaMallocHost(&in, bytes));
    CUDA_CHECK(cudaMallocHost(&out, bytes));
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, bytes));
    fill_on_host(in, count, 5);
    std::vector<cudaStream_t> streams(most_streams);
    for (cudaStream_t& s : streams) CUDA_CHECK(cudaStreamCreate(&s));
    // Each stage alone, on the whole buffer: at best the pipeline takes the longest stage and a
    // K-th of the other two.
    {
        const tutorial::During during(upload_alone);
        CUDA_CHECK(cudaMemcpyAsync(d_in, in, bytes, cudaMemcpyHostToDevice, nullptr));
    }
    {
        const tutorial::During during(kernel_alone);
        transform_kernel<<<1024, 256>>>(d_in, d_out, count, rounds);
        CUDA_CHECK_LAUNCH();
    }
    {
        const tutorial::During during(download_alone);
        CUDA_CHECK(cudaMemcpyAsync(out, d_out, bytes, cudaMemcpyDeviceToHost, nullptr));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    // The pipeline over K = 1, 2, 4, ... streams; each run's results checked.
    for (int i = 0; i < 4 && stream_counts[i] <= most_streams; ++i) {
        std::memset(out, 0, bytes);  // a chunk that never came back shows
        {
            const tutorial::During during(pipeline_steps[i]);
            pipeline(in, out, d_in, d_out, count, streams, stream_counts[i], rounds);
        }
        CUDA_CHECK(cudaDeviceSynchronize());
        found.wrong_results += transform_mismatches(in, out, count, rounds);
    }
    for (cudaStream_t s : streams) CUDA_CHECK(cudaStreamDestroy(s));
    for (std::uint32_t* p : {d_in, d_out}) CUDA_CHECK(cudaFree(p));
    for (std::uint32_t* p : {in, out}) CUDA_CHECK(cudaFreeHost(p));
    return found;
}

// One copy of part 1, in its two steps, then checked where it landed. Returns whether all of it
// arrived.
bool copy_once(const Call& c, std::uint32_t* host, std::uint32_t* device, std::size_t count,
               std::uint32_t seed, cudaStream_t stream) {
    std::uint32_t* on_host = c.to_device ? nullptr : host;
    if (c.to_device) {
        fill_on_host(host, count, seed);
        fill_on_device(device, count, ~seed);  // so that a copy that did nothing shows
    } else {
        fill_on_device(device, count, seed);
        fill_on_host(host, count, ~seed);
    }
    {
        const tutorial::During during(c.call, stream);
        CUDA_CHECK(cudaMemcpyAsync(c.to_device ? static_cast<void*>(device) : host,
                                   c.to_device ? static_cast<void*>(host) : device,
                                   count * sizeof *host, cudaMemcpyDefault, stream));
    }
    {
        const tutorial::During during(c.wait, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    return (on_host != nullptr ? mismatches_on_host(on_host, count, seed)
                               : mismatches_on_device(device, count, seed)) == 0;
}

// The buffer in K chunks: chunk i goes up, through the kernel and back down in stream i, so one
// chunk's kernel can run while the next one uploads and the one before downloads.
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

// `rounds` steps of x -> a*x + c are themselves one step x -> A*x + C (all mod 2^32), so the CPU
// checks every element with one multiply-add instead of repeating the kernel's loop.
std::size_t transform_mismatches(const std::uint32_t* in, const std::uint32_t* out,
                                 std::size_t count, int rounds) {
    std::uint32_t a = 1;
    std::uint32_t c = 0;
    for (int r = 0; r < rounds; ++r) {
        a = a * lcg_a;
        c = c * lcg_a + lcg_c;
    }
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) wrong += out[i] != a * in[i] + c;
    return wrong;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    Found found{};
    for (int round = 0; round < 7; ++round) {  // seven rounds: the answer is their medians
        const Found f = walkthrough(std::size_t{64} << 20, 256, 8);
        found.wrong_copies += f.wrong_copies;
        found.wrong_results += f.wrong_results;
    }
    times.print();
    std::printf("64 MiB copied 4 ways and through the pipeline with K = 1 to 8 streams, 7 times: "
                "%d copies and %zu results wrong\n",
                found.wrong_copies, found.wrong_results);
    // The answer: how long each cudaMemcpyAsync host -> device kept the CPU, as a share of its
    // copy (call and wait), and what 4 streams did for the pipeline.
    const auto held_percent = [&](const Call& c) {
        const double call_ms = times.median_host_ms(c.call);
        return 100.0 * call_ms / (call_ms + times.median_host_ms(c.wait));
    };
    std::printf("64 MiB: a pinned cudaMemcpyAsync returned after %.2f%% of its copy, a pageable "
                "one only when %.1f%% was done; 4 streams finished the chunked pipeline %.2fx "
                "sooner than 1\n",
                held_percent(calls[2]), held_percent(calls[0]),
                times.median_ms(pipeline_steps[0]) / times.median_ms(pipeline_steps[2]));
    return found.wrong_copies == 0 && found.wrong_results == 0 ? 0 : 1;
}
#endif
