// Section `master_workers`: the seed's scenario. A master process puts a batch of data on the GPU
// once, and worker processes use it in place through IPC handles.
#include "common/report.hpp"
#include "sections.hpp"
#include "workers.hpp"

#include <cstdio>

using namespace tutorial;

tutorial::Result run_master_workers(tutorial::Context& ctx) {
    const int workers = ctx.workers_or(ctx.quick() ? 2 : 4);
    const std::size_t count = ctx.size_or(ctx.quick() ? (4 << 20) : (256 << 20)) / 4;
    std::printf(
        "The master fills %s on the device and starts %d workers (fork + exec of this program).\n"
        "Each gets, on its stdin, the IPC handles of the input and result buffers and its slice\n"
        "as an offset and a count; it sums its slice, writes 2 * x + 1 into the result buffer,\n"
        "closes the handles and reports the sum.\n\n",
        format_bytes(count * 4).c_str(), workers);
    const BatchOutcome batch = run_batch(ctx.device, count, workers, -1);

    std::printf("master: input at 0x%zx, result at 0x%zx\n", static_cast<std::size_t>(batch.input),
                static_cast<std::size_t>(batch.result));
    Table table({{"worker"},
                 {"slice", Align::right},
                 {"addresses in the worker"},
                 {"ended"},
                 {"sum"},
                 {"results"}});
    int good = 0;
    for (std::size_t w = 0; w < batch.workers.size(); ++w) {
        const WorkerOutcome& o = batch.workers[w];
        good += o.child.succeeded() && o.checksum_ok && o.results_ok;
        table.add_row({format("%zu", w), format("%zu + %zu", o.offset, o.count), o.mapped,
                       o.child.describe(), o.checksum_ok ? "correct" : "WRONG",
                       o.results_ok ? "correct" : "WRONG"});
    }
    table.print();
    std::printf(
        "\nThe same memory appears at a different address in each process, which is why the\n"
        "slices travel as offsets: a pointer from the master would mean nothing in a worker.\n");
    return ctx.verdict(good == workers,
                       format("%d of %d workers reported the right sum for their slice and wrote "
                              "the right results into the shared buffer",
                              good, workers));
}
