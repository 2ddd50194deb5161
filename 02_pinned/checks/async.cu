// Checks of section async: times the calls of ../async.cu from pageable and pinned memory, runs
// its pipeline over K streams against the stages alone, checks every result and judges both.
#include "02_pinned/async.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/patterns.hpp"

#include <cstdio>
#include <cstring>

using tutorial::format;

namespace {

void launch_transform(const std::uint32_t* in, std::uint32_t* out, std::size_t count, int rounds,
                      cudaStream_t stream) {
    transform_kernel<<<1024, 256, 0, stream>>>(in, out, count, rounds);
    CUDA_CHECK_LAUNCH();
}

// `rounds` steps of x -> a*x + c are themselves one step x -> A*x + C (all mod 2^32), so the CPU
// can check every element with one multiply-add instead of repeating the kernel's loop.
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

struct Calls {
    double blocked_share[2][2];  // [pageable, pinned][up, down]: the call's time / the copy's
    int failures;                // copies whose data did not arrive
};

// Part 1: how long the call blocks the CPU, from pageable and from pinned memory, both ways.
Calls time_calls(std::size_t bytes, int runs) {
    const std::size_t count = bytes / sizeof(std::uint32_t);
    const Buffer device(MemoryKind::device, bytes);
    tutorial::Table calls({{"host memory"},
                           {"direction"},
                           {"call returned after ms", tutorial::Align::right},
                           {"copy done after ms", tutorial::Align::right},
                           {"CPU blocked for", tutorial::Align::right}});
    Calls result{};
    std::uint32_t seed = 21;
    for (MemoryKind kind : {MemoryKind::pageable, MemoryKind::pinned}) {
        const Buffer host(kind, bytes);
        for (const bool to_device : {true, false}) {
            const Buffer& source = to_device ? host : device;
            const Buffer& destination = to_device ? device : host;
            fill(source, count, seed);
            fill(destination, count, ~seed);
            const CallTiming t = time_async_call(destination.get(), source.get(), bytes, runs);
            const bool ok = mismatches(destination, count, seed) == 0;
            result.failures += ok ? 0 : 1;
            result.blocked_share[kind == MemoryKind::pinned][to_device ? 0 : 1] =
                t.returned_ms / t.finished_ms;
            calls.add_row({tutorial::kind_name(kind),
                           to_device ? "host -> device" : "device -> host",
                           format("%.3f", t.returned_ms), format("%.3f", t.finished_ms),
                           ok ? format("%.0f%% of the copy", 100.0 * t.returned_ms / t.finished_ms)
                              : "WRONG DATA"});
            ++seed;
        }
    }
    calls.print();
    return result;
}

struct Stages {
    double upload_ms, kernel_ms, download_ms;
    int rounds;  // the kernel's work per element
};

// Each stage alone, on the whole buffer, in the legacy default stream. The kernel's amount of
// work is set so that it takes about as long as the upload: overlap helps most when the stages
// are balanced.
Stages time_stages(const Pipeline& p, int runs) {
    const std::size_t bytes = p.count * sizeof(std::uint32_t);
    const auto kernel = [&](int rounds) {
        return tutorial::median_event_ms(
            1, runs, [&] { launch_transform(p.d_in(), p.d_out(), p.count, rounds, nullptr); });
    };
    Stages s{};
    s.upload_ms = tutorial::median_event_ms(1, runs, [&] {
        CUDA_CHECK(cudaMemcpyAsync(p.d_in(), p.in(), bytes, cudaMemcpyDefault, nullptr));
    });
    // The kernel's time is not proportional to its rounds while memory traffic dominates, so
    // the guess is refined a few times.
    s.rounds = 64;
    for (int attempt = 0; attempt < 3; ++attempt) {
        s.kernel_ms = kernel(s.rounds);
        s.rounds = std::clamp(static_cast<int>(s.rounds * s.upload_ms / s.kernel_ms), 1, 8192);
    }
    s.kernel_ms = kernel(s.rounds);
    s.download_ms = tutorial::median_event_ms(1, runs, [&] {
        CUDA_CHECK(cudaMemcpyAsync(p.out(), p.d_out(), bytes, cudaMemcpyDefault, nullptr));
    });
    return s;
}

// Chunk i of K goes up, through the kernel and back down in stream i. Returns the milliseconds
// (events on the legacy default stream, which waits for every stream) and counts wrong results.
double run_pipeline(const Pipeline& p, const std::vector<cudaStream_t>& streams, int k, int rounds,
                    std::size_t& wrong) {
    std::memset(p.out(), 0, p.count * sizeof(std::uint32_t));  // a chunk that never came back shows
    tutorial::EventTimer whole;
    whole.start();
    pipeline(p.in(), p.out(), p.d_in(), p.d_out(), p.count, streams, k, rounds);
    whole.stop();
    const double ms = whole.elapsed_ms();
    wrong += transform_mismatches(p.in(), p.out(), p.count, rounds);
    return ms;
}

struct Overlap {
    double serial_ms;       // the three stages one after the other
    double four_streams_x;  // the speed-up of K = 4 over K = 1
    int failures;           // pipeline runs with wrong results
};

// Part 2: the pipeline over K = 1, 2, 4, ... streams, as a table.
Overlap overlap(std::size_t bytes, int runs, const std::vector<int>& stream_counts) {
    const Pipeline p(bytes);
    fill(p.host_in, p.count, 5);
    const Stages s = time_stages(p, runs);
    const double serial_ms = s.upload_ms + s.kernel_ms + s.download_ms;
    const double longest_ms = std::max({s.upload_ms, s.kernel_ms, s.download_ms});
    std::printf(
        "Part 2: upload %s, transform it (%d rounds of integer work per element), download.\n"
        "Each stage alone: upload %.3f ms, kernel %.3f ms, download %.3f ms.\n"
        "With K streams the buffer is cut into K chunks; chunk i goes up, through the kernel\n"
        "and back down in stream i, so one chunk's kernel can run while the next chunk uploads\n"
        "and the previous one downloads. Ideal time: the longest stage + the rest / K.\n\n",
        tutorial::format_bytes(bytes).c_str(), s.rounds, s.upload_ms, s.kernel_ms, s.download_ms);

    const std::vector<cudaStream_t> streams = create_streams(stream_counts.back());
    tutorial::Table table({{"streams K", tutorial::Align::right},
                           {"measured ms", tutorial::Align::right},
                           {"ideal ms", tutorial::Align::right},
                           {"speed-up vs K = 1", tutorial::Align::right},
                           {"results"}});
    int failures = 0;
    double one_stream_ms = 0.0;
    double four_streams_x = 0.0;
    for (int k : stream_counts) {
        std::size_t wrong = 0;
        const double ms = tutorial::median_ms(
            1, runs, [&] { return run_pipeline(p, streams, k, s.rounds, wrong); });
        if (k == 1) one_stream_ms = ms;
        if (k == 4) four_streams_x = one_stream_ms / ms;
        failures += wrong == 0 ? 0 : 1;
        table.add_row({format("%d", k), format("%.3f", ms),
                       format("%.3f", longest_ms + (serial_ms - longest_ms) / k),
                       format("%.2fx", one_stream_ms / ms),
                       wrong == 0 ? "all correct" : format("%zu wrong", wrong)});
    }
    table.print();
    for (cudaStream_t stream : streams) CUDA_CHECK(cudaStreamDestroy(stream));
    return {serial_ms, four_streams_x, failures};
}

}  // namespace

tutorial::Result run_async(tutorial::Context& ctx) {
    // Even in quick mode the pipeline moves 32 MiB: with 8 MiB each stage took about 0.16 ms, and
    // one stall of the CPU while it queued the 12 calls of K = 4 could cost more than the overlap
    // saved (once in 30 quick runs on an H100, 4 streams came out slower than 1).
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (32 << 20) : (64 << 20));
    const int runs = ctx.iters_or(ctx.quick() ? 5 : 7);
    std::printf(
        "Part 1: cudaMemcpyAsync of %s on a stream. A host timer reads when the call returns\n"
        "and when cudaStreamSynchronize says the copy is done (median of %d).\n\n",
        tutorial::format_bytes(bytes).c_str(), runs);
    const Calls calls = time_calls(bytes, runs);
    int failures = calls.failures;
    std::printf(
        "\nFrom pageable memory the call cannot return before the driver has pushed the data\n"
        "through its staging buffer, so the CPU is blocked for (nearly) the whole copy: the\n"
        "\"Async\" is in name only. From pinned memory the call only queues the copy for the copy\n"
        "engine and the CPU is free at once.\n\n");

    const std::vector<int> stream_counts =
        ctx.quick() ? std::vector<int>{1, 4} : std::vector<int>{1, 2, 4, 8};
    const Overlap o = overlap(bytes, runs, stream_counts);
    failures += o.failures;
    const int engines = tutorial::device_attribute(ctx.device, cudaDevAttrAsyncEngineCount);
    std::printf(
        "\nSerial (the three stages one after the other): %.3f ms. asyncEngineCount = %d: %s\n"
        "Every run's output was checked element by element against the CPU's closed form "
        "of the kernel.\n\n",
        o.serial_ms, engines,
        engines >= 2   ? "uploads, downloads and kernels can all run at the same time."
        : engines == 1 ? "one copy engine, so a copy can run beside a kernel, but an upload and a\n"
                         "download take turns: only part of the pipeline overlaps."
                       : "no copy engine runs beside a kernel: the stages take turns.");
    ctx.claim(tutorial::at_most(
        "a pinned cudaMemcpyAsync host -> device returns long before the copy is done (call "
        "time as a share of the copy's)",
        100.0 * calls.blocked_share[1][0], 30.0, "%",
        "the call waited for the copy: is the host buffer really pinned, and the stream not "
        "the legacy default stream of a busy device?"));
    ctx.claim(
        tutorial::at_least(
            "a pageable cudaMemcpyAsync host -> device blocks the CPU for most of the copy",
            100.0 * calls.blocked_share[0][0], 50.0, "%",
            "this system let the copy engine read pageable memory directly (HMM or a coherent "
            "CPU-GPU link), so no staging through the CPU was needed"),
        tutorial::why_hardware_coherent(ctx.device));
    ctx.claim(tutorial::at_least("4 streams finish the chunked pipeline sooner than 1",
                                 o.four_streams_x, 1.3, "x",
                                 "the stages did not overlap: the copies and kernels may have "
                                 "been too short for their launch costs to hide"),
              engines >= 2 ? ""
                           : format("this device has %d copy engine(s); overlapping an "
                                    "upload with a download needs 2",
                                    engines));
    return ctx.verdict(failures == 0,
                       format("every async copy delivered its data and every pipeline run "
                              "(K = 1 to %d streams) produced the CPU's expected results",
                              stream_counts.back()));
}

TUTORIAL_SECTION(async, run_async);
