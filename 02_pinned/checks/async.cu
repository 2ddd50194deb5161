// Checks of section async: sets the kernel's work so that it takes about as long as the upload,
// then runs the walkthrough of ../async.cu round after round and times its steps: how long each
// cudaMemcpyAsync keeps the CPU (host clock), the stages alone and the pipeline over K streams
// (events on the legacy default stream, which waits for every stream). Judges both parts.
#include "02_pinned/async.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"

#include <algorithm>
#include <functional>
#include <string>

using tutorial::format;

namespace {

// Medians over rounds of the walkthrough.
struct Medians {
    double call_ms[4], wait_ms[4];  // part 1, in the order of `calls`
    double upload_ms, kernel_ms, download_ms;
    double pipeline_ms[4];  // in the order of `stream_counts`; 0 where not run
};

Medians time_rounds(std::size_t bytes, int rounds, int most_streams, int runs, Found& wrong) {
    tutorial::StepTimes times;
    for (int r = 0; r < runs; ++r) {
        const Found f = walkthrough(bytes, rounds, most_streams);
        wrong.wrong_copies += f.wrong_copies;
        wrong.wrong_results += f.wrong_results;
    }
    Medians m{};
    for (int i = 0; i < 4; ++i) {
        m.call_ms[i] = times.median_host_ms(calls[i].call);
        m.wait_ms[i] = times.median_host_ms(calls[i].wait);
        if (stream_counts[i] <= most_streams) m.pipeline_ms[i] = times.median_ms(pipeline_steps[i]);
    }
    m.upload_ms = times.median_ms(upload_alone);
    m.kernel_ms = times.median_ms(kernel_alone);
    m.download_ms = times.median_ms(download_alone);
    return m;
}

// The kernel's work per element, set so that the kernel takes about as long as the upload:
// overlap helps most when the stages are balanced. Its time is not proportional to its rounds
// while memory traffic dominates, so the guess is refined a few times (one walkthrough each).
int balanced_rounds(std::size_t bytes, Found& wrong) {
    int rounds = 64;
    for (int attempt = 0; attempt < 3; ++attempt) {
        const Medians m = time_rounds(bytes, rounds, 1, 1, wrong);
        const double ratio = m.kernel_ms > 0.0 ? m.upload_ms / m.kernel_ms : 2.0;
        rounds = static_cast<int>(std::clamp(rounds * ratio, 1.0, 8192.0));
    }
    return rounds;
}

// The call's time as a share of the whole copy's (call and wait), in percent.
double blocked_percent(const Medians& m, int i) {
    return 100.0 * m.call_ms[i] / (m.call_ms[i] + m.wait_ms[i]);
}

void print_calls(const Medians& m) {
    tutorial::Table table({{"host memory"},
                           {"direction"},
                           {"call returned after ms", tutorial::Align::right},
                           {"copy done after ms", tutorial::Align::right},
                           {"CPU blocked for", tutorial::Align::right}});
    for (int i = 0; i < 4; ++i) {
        table.add_row({calls[i].pinned ? "pinned" : "pageable",
                       calls[i].to_device ? "host -> device" : "device -> host",
                       format("%.3f", m.call_ms[i]), format("%.3f", m.call_ms[i] + m.wait_ms[i]),
                       format("%.0f%% of the copy", blocked_percent(m, i))});
    }
    table.print();
}

void print_pipeline(const Medians& m, int most_streams) {
    const double serial_ms = m.upload_ms + m.kernel_ms + m.download_ms;
    const double longest_ms = std::max({m.upload_ms, m.kernel_ms, m.download_ms});
    tutorial::Table table({{"streams K", tutorial::Align::right},
                           {"measured ms", tutorial::Align::right},
                           {"ideal ms", tutorial::Align::right},
                           {"speed-up vs K = 1", tutorial::Align::right}});
    for (int i = 0; i < 4 && stream_counts[i] <= most_streams; ++i) {
        const int k = stream_counts[i];
        table.add_row({format("%d", k), format("%.3f", m.pipeline_ms[i]),
                       format("%.3f", longest_ms + (serial_ms - longest_ms) / k),
                       format("%.2fx", m.pipeline_ms[0] / m.pipeline_ms[i])});
    }
    table.print();
}

void claim_calls(tutorial::Context& ctx, std::size_t bytes, const Medians& m,
                 const std::function<Medians()>& again) {
    // Below a few MiB a copy is mostly its fixed costs (the call, the copy engine's start, the
    // completion), and the driver stages a small pageable copy whole and returns before it is
    // sent: neither share means what it does for a large copy.
    const std::string small = tutorial::why_too_small(
        bytes, 4 << 20,
        "a copy this small is mostly its fixed costs, and the driver may stage a "
        "small pageable copy whole and return before sending it");
    ctx.claim(tutorial::at_most("pinned_call_returns",
                                "a pinned cudaMemcpyAsync host -> device returns long before the "
                                "copy is done (call time as a share of the copy's)",
                                blocked_percent(m, 2), 30.0, "%",
                                "the call waited for the copy: is the host buffer really pinned, "
                                "and the stream not the legacy default stream of a busy device?")
                  .again([&] { return blocked_percent(again(), 2); }),
              small);
    const std::string coherent = tutorial::why_hardware_coherent(ctx.device);
    ctx.claim(tutorial::at_least("pageable_call_blocks",
                                 "a pageable cudaMemcpyAsync host -> device blocks the CPU for "
                                 "most of the copy",
                                 blocked_percent(m, 0), 50.0, "%",
                                 "this system let the copy engine read pageable memory directly "
                                 "(HMM or a coherent CPU-GPU link), so no staging through the CPU "
                                 "was needed")
                  .again([&] { return blocked_percent(again(), 0); }),
              coherent.empty() ? small : coherent);
}

}  // namespace

tutorial::Result run_async(tutorial::Context& ctx) {
    // Even in quick mode the pipeline moves 32 MiB: with 8 MiB each stage took about 0.16 ms, and
    // one stall of the CPU while it queued the 12 calls of K = 4 could cost more than the overlap
    // saved (once in 30 quick runs on an H100, 4 streams came out slower than 1).
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (32 << 20) : (64 << 20));
    const int runs = ctx.iters_or(ctx.quick() ? 5 : 7);
    const int most_streams = ctx.quick() ? 4 : 8;
    Found wrong{};
    const int rounds = balanced_rounds(bytes, wrong);
    std::printf(
        "The walkthrough, %d times after a warm-up, on %s. Part 1: cudaMemcpyAsync on a\n"
        "stream; the host's clock reads when the call returns and when cudaStreamSynchronize\n"
        "says the copy is done (medians).\n\n",
        runs, tutorial::format_bytes(bytes).c_str());
    const auto again = [&] { return time_rounds(bytes, rounds, most_streams, runs, wrong); };
    time_rounds(bytes, rounds, most_streams, 1, wrong);  // the warm-up
    const Medians m = again();
    print_calls(m);
    std::printf(
        "\nFrom pageable memory the call cannot return before the driver has pushed the data\n"
        "through its staging buffer, so the CPU is blocked for (nearly) the whole copy: the\n"
        "\"Async\" is in name only. From pinned memory the call only queues the copy for the copy\n"
        "engine and the CPU is free at once.\n\n");
    std::printf(
        "Part 2: upload, transform (%d rounds of integer work per element), download.\n"
        "Each stage alone: upload %.3f ms, kernel %.3f ms, download %.3f ms.\n"
        "With K streams the buffer is cut into K chunks; chunk i goes up, through the kernel\n"
        "and back down in stream i, so one chunk's kernel can run while the next chunk uploads\n"
        "and the previous one downloads. Ideal time: the longest stage + the rest / K.\n\n",
        rounds, m.upload_ms, m.kernel_ms, m.download_ms);
    print_pipeline(m, most_streams);
    const int engines = tutorial::device_attribute(ctx.device, cudaDevAttrAsyncEngineCount);
    std::printf(
        "\nSerial (the three stages one after the other): %.3f ms. asyncEngineCount = %d: %s\n"
        "Every run's output was checked element by element against the CPU's closed form "
        "of the kernel.\n\n",
        m.upload_ms + m.kernel_ms + m.download_ms, engines,
        engines >= 2   ? "uploads, downloads and kernels can all run at the same time."
        : engines == 1 ? "one copy engine, so a copy can run beside a kernel, but an upload and a\n"
                         "download take turns: only part of the pipeline overlaps."
                       : "no copy engine runs beside a kernel: the stages take turns.");
    claim_calls(ctx, bytes, m, again);
    // The overlap needs chunks whose stages outlast the calls that queue them.
    std::string why_not = engines >= 2 ? ""
                                       : format(
                                             "this device has %d copy engine(s); overlapping "
                                             "an upload with a download needs 2",
                                             engines);
    if (why_not.empty())
        why_not = tutorial::why_too_small(bytes, 16 << 20,
                                          "chunks this small take about as long as the calls "
                                          "that queue them, so there is little to overlap");
    ctx.claim(tutorial::at_least("pipeline_overlaps",
                                 "4 streams finish the chunked pipeline sooner than 1",
                                 m.pipeline_ms[0] / m.pipeline_ms[2], 1.3, "x",
                                 "the stages did not overlap: the copies and kernels may have "
                                 "been too short for their launch costs to hide")
                  .again([&] {
                      const Medians n = again();
                      return n.pipeline_ms[0] / n.pipeline_ms[2];
                  }),
              why_not);
    return ctx.verdict(wrong.wrong_copies == 0 && wrong.wrong_results == 0,
                       format("every async copy delivered its data and every pipeline run "
                              "(K = 1 to %d streams) produced the CPU's expected results",
                              most_streams));
}

TUTORIAL_SECTION(async, run_async);
