// Checks of section ipc_events: starts the consumer of ../ipc_events.cu in a child process,
// announces every batch before the master's stream has produced it, and checks that each sum the
// consumer reads is the batch just produced.
#include "07_ipc/ipc_events.cu"

#include "../helpers/channel.hpp"
#include "../helpers/ipc_common.hpp"
#include "common/busy.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

using tutorial::Align;
using tutorial::ChildProcess;
using tutorial::ChildResult;
using tutorial::format;

// Child role: the consumer. First line on stdin: memory handle, event handle, count. Then one
// line per batch; for each, its stream waits on the master's event and then sums the buffer. The
// answers go back over the channel (channel.hpp), where the master waits for them.
int child_consumer(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    std::string line;
    std::string memory_hex;
    std::string event_hex;
    std::size_t count = 0;
    if (tutorial::read_input_line(line, task_timeout_s) != tutorial::Input::received) return 4;
    std::istringstream(line) >> memory_hex >> event_hex >> count;
    cudaIpcMemHandle_t memory_handle{};
    cudaIpcEventHandle_t event_handle{};
    if (!from_hex(memory_hex, &memory_handle, sizeof memory_handle) ||
        !from_hex(event_hex, &event_handle, sizeof event_handle)) {
        return 4;
    }
    void* data = nullptr;
    cudaEvent_t produced = nullptr;
    open_shared(memory_handle, event_handle, &data, &produced);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    // One sum before the first batch, so that the kernel is loaded: from now on the consumer
    // answers a batch within a few milliseconds, long before the master's batch is ready.
    CUDA_CHECK(cudaMemset(sum, 0, sizeof *sum));
    sum_on_device_async(static_cast<const std::uint32_t*>(data), count, sum, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    send_line(tutorial::child_passed_fd, "ready");
    // "batch N" lines, until the master closes the pipe; a master silent for task_timeout_s is
    // given up on.
    while (tutorial::read_input_line(line, task_timeout_s) == tutorial::Input::received) {
        const unsigned long long value =
            consume(stream, produced, static_cast<const std::uint32_t*>(data), count, sum);
        send_line(tutorial::child_passed_fd, "consumed " + line + ": sum " + std::to_string(value));
    }
    CUDA_CHECK(cudaFree(sum));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaEventDestroy(produced));
    CUDA_CHECK(cudaIpcCloseMemHandle(data));
    return 0;
}

tutorial::Result run_ipc_events(tutorial::Context& ctx) {
    if (const std::string why = why_no_legacy_ipc(ctx.device); !why.empty()) return ctx.skip(why);
    const int batches = ctx.iters_or(ctx.quick() ? 3 : 8);
    const std::size_t count = (ctx.quick() ? (4 << 20) : (64 << 20)) / 4;
    std::uint32_t* buffer = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer, count * sizeof *buffer));
    // Batch b is every byte set to b + 1, so each batch has its own sum; the buffer starts at
    // zero, which is what an early read of batch 0 would see.
    CUDA_CHECK(cudaMemset(buffer, 0, count * sizeof *buffer));
    cudaIpcMemHandle_t memory_handle{};
    cudaIpcEventHandle_t event_handle{};
    cudaEvent_t produced = share(buffer, &memory_handle, &event_handle);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    std::printf(
        "%d batches of %s. For each, the master queues 20 ms of other work and then the batch\n"
        "(a memset of every byte to N + 1) on its stream, records the interprocess event, and at\n"
        "once tells the consumer \"batch N\", long before the batch exists. The consumer's stream\n"
        "waits on the event, then sums the buffer; an early read would sum what the buffer held\n"
        "before the master's queued memsets ran, never batch N.\n\n",
        batches, tutorial::format_bytes(count * 4).c_str());
    Channel channel;
    ChildProcess consumer("consumer", {std::to_string(ctx.device)}, channel.worker_end());
    channel.close_worker_end();
    consumer.send(to_hex(&memory_handle, sizeof memory_handle) + " " +
                  to_hex(&event_handle, sizeof event_handle) + " " + std::to_string(count) + "\n");
    // Only once the consumer is up (its context made, the handles open): otherwise batch 0 would
    // be long finished before the consumer could look, and prove nothing about the event.
    std::string ready;
    const bool started = read_line(channel.master_end(), ready, 60.0) && ready == "ready";
    std::printf("The consumer %s.\n\n",
                started ? "has opened both handles and is ready" : "did not say it was ready");
    tutorial::Table table(
        {{"batch", Align::right}, {"consumer says"}, {"expected sum", Align::right}, {"ok"}});
    int in_order = 0;
    for (int b = 0; b < batches && started; ++b) {
        tutorial::launch_busy(stream, 20.0);
        produce(stream, buffer, count, b + 1, produced);
        consumer.send("batch " + std::to_string(b) + "\n");
        std::string reply;
        const bool answered = read_line(channel.master_end(), reply, 30.0);
        const std::uint64_t expected = count * (static_cast<std::uint64_t>(b + 1) * 0x01010101u);
        const bool ok = answered && reply == format("consumed batch %d: sum %llu", b,
                                                    static_cast<unsigned long long>(expected));
        in_order += ok;
        table.add_row({format("%d", b), answered ? reply : "(no answer)",
                       format("%llu", static_cast<unsigned long long>(expected)),
                       ok ? "yes" : "NO"});
        // The next batch overwrites the buffer: only after the consumer has answered.
        if (!answered) break;
    }
    const ChildResult ended = consumer.wait(30.0);
    table.print();
    std::printf("The consumer %s.\n", ended.describe().c_str());
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaEventDestroy(produced));
    CUDA_CHECK(cudaFree(buffer));
    std::printf(
        "\nThe event is the only synchronization between the two GPU streams: the consumer's\n"
        "stream waited on the master's most recent record each time (the cudaIpcGetEventHandle\n"
        "and cudaStreamWaitEvent entries). Without the wait nothing orders the consumer's read\n"
        "after the master's memset, and what it reads is not predictable: any state of the\n"
        "buffer. (In the README's experiment, driver 580 read the buffer's first contents.)\n\n");
    ctx.claim(tutorial::documented(
        "event_orders_stream", "an interprocess event orders another process's stream after this one's work",
        in_order == batches,
        format("%d of %d batches summed after they were produced, though announced before",
               in_order, batches),
        "the consumer's stream did not wait on the event (cudaStreamWaitEvent missing)",
        // The opened event behaves as one created here: a stream that waits on it waits for the
        // work its last record followed (the cudaStreamWaitEvent entry).
        tutorial::Entry{"Runtime API reference: cudaIpcOpenEventHandle",
                        "cudaEvent_t cudaEventDisableTiming", "returns"}));
    return ctx.verdict(in_order == batches && ended.succeeded(),
                       format("%d of %d batches were consumed in order, each with the sum of the "
                              "batch just produced, never the one before",
                              in_order, batches));
}

TUTORIAL_SECTION(ipc_events, run_ipc_events);
TUTORIAL_CHILD(consumer, child_consumer);
