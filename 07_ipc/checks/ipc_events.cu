// Checks of section ipc_events: runs the walkthrough of ../ipc_events.cu, whose consumer is this
// program in the child role `consumer` (the lesson's consumer()); every batch is announced before
// the master's stream has produced it, and each sum the consumer read must be the batch just
// produced.
#include "07_ipc/ipc_events.cu"

#include "../helpers/ipc_common.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"

#include <cstdio>

using tutorial::Align;
using tutorial::format;

// Child role `consumer` (args: device): the lesson's consumer.
int child_consumer(const std::vector<std::string>& args) {
    return consumer(std::atoi(args.at(0).c_str()));
}

namespace {

// Batch b sets every byte to b + 1: its sum over `count` elements.
unsigned long long batch_sum(std::size_t count, int b) {
    return count * (static_cast<unsigned long long>(b + 1) * 0x01010101ull);
}

}  // namespace

tutorial::Result run_ipc_events(tutorial::Context& ctx) {
    if (const std::string why = why_no_legacy_ipc(ctx.device); !why.empty()) return ctx.skip(why);
    const int batches = ctx.iters_or(ctx.quick() ? 3 : 8);
    const std::size_t count = (ctx.quick() ? (4 << 20) : (64 << 20)) / 4;
    std::printf(
        "%d batches of %s. For each, the master queues 20 ms of other work and then the batch\n"
        "(a memset of every byte to N + 1) on its stream, records the interprocess event, and at\n"
        "once tells the consumer \"batch N\", long before the batch exists. The consumer's stream\n"
        "waits on the event, then sums the buffer; an early read would sum what the buffer held\n"
        "before the master's queued memsets ran, never batch N.\n\n",
        batches, tutorial::format_bytes(count * 4).c_str());
    const Found found =
        walkthrough(count, batches, ctx.device, {"/proc/self/exe", tutorial::child_flag});
    std::printf("The consumer %s.\n\n",
                found.ready ? "has opened both handles and is ready" : "did not say it was ready");
    tutorial::Table table({{"batch", Align::right},
                           {"the consumer read", Align::right},
                           {"batch's sum", Align::right},
                           {"ok"}});
    int in_order = 0;
    for (int b = 0; b < batches; ++b) {
        const bool answered = b < static_cast<int>(found.sums.size());
        const bool ok = answered && found.sums[b] == batch_sum(count, b);
        in_order += ok;
        table.add_row({format("%d", b), answered ? format("%llu", found.sums[b]) : "(no answer)",
                       format("%llu", batch_sum(count, b)), ok ? "yes" : "NO"});
    }
    table.print();
    const tutorial::ChildResult ended = child_result(found.status);
    std::printf("The consumer %s.\n", ended.describe().c_str());
    std::printf(
        "\nThe event is the only synchronization between the two GPU streams: the consumer's\n"
        "stream waited on the master's most recent record each time. Without the wait nothing\n"
        "orders the consumer's read after the master's memset, and what it reads is not\n"
        "predictable: any state of the buffer.\n\n");
    // The opened event behaves as one created in the consumer: a stream that waits on it waits for
    // the work its last record followed (the cudaStreamWaitEvent entry).
    ctx.claim(tutorial::documented(
        "event_orders_stream",
        "an interprocess event orders another process's stream after this one's work",
        in_order == batches,
        format("%d of %d batches summed after they were produced, though announced before",
               in_order, batches),
        "the consumer's stream did not wait on the event (cudaStreamWaitEvent missing)",
        tutorial::Entry{"Runtime API reference: cudaIpcOpenEventHandle",
                        "cudaEvent_t cudaEventDisableTiming", "returns"}));
    return ctx.verdict(in_order == batches && ended.succeeded(),
                       format("%d of %d batches were consumed in order, each with the sum of the "
                              "batch just produced, never the one before",
                              in_order, batches));
}

TUTORIAL_SECTION(ipc_events, run_ipc_events);
TUTORIAL_CHILD(consumer, child_consumer);
