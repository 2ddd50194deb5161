// Checks of section batch_copies: runs the walkthrough of ../batch_copies.cu round after round
// (the five ways take turns in each) and times its steps on the host's clock, runs its wrong
// attribute arrays in a child, and judges.
#include "02_pinned/batch_copies.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/harness/steps.hpp"
#include "common/timing.hpp"

#include <cstdlib>
#include <string>

using tutorial::format;

// Child role: wrong_attributes, one line per call, "<what> -> <result>", for the parent to read.
int child_batch_misuse(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    for (const Answer& a : wrong_attributes())
        std::printf("%-58s -> %s\n", a.what, cudaGetErrorName(a.got));
    return 0;
}

namespace {

// Medians over rounds of the walkthrough, ms from the first call until the stream is done.
struct Medians {
    double ms[5];
};

Medians time_rounds(std::size_t pieces, int runs, std::size_t& wrong) {
    tutorial::StepTimes times;
    for (int r = 0; r < runs; ++r) wrong += walkthrough(pieces);
    Medians m{};
    for (int way = 0; way < 5; ++way) m.ms[way] = times.median_host_ms(ways[way]);
    return m;
}

}  // namespace

tutorial::Result run_batch_copies(tutorial::Context& ctx) {
    const std::size_t pieces = ctx.size_or(16 << 20) / piece;  // --size: all pieces together
    const int runs = ctx.quick() ? 5 : 9;
    std::printf(
        "%zu copies of %s each, host -> device: source pieces in shuffled order, destinations\n"
        "%s apart. The walkthrough %d times after a warm-up, the five ways in turn in each;\n"
        "host clock from the first call until the stream is done, medians; every destination\n"
        "piece checked by a kernel after each way.\n\n",
        pieces, tutorial::format_bytes(piece).c_str(), tutorial::format_bytes(2 * piece).c_str(),
        runs);
    std::size_t wrong = walkthrough(pieces);  // the warm-up
    const auto again = [&] { return time_rounds(pieces, runs, wrong); };
    const Medians m = again();
    tutorial::Table table({{"source, how"},
                           {"ms", tutorial::Align::right},
                           {"us per copy", tutorial::Align::right},
                           {"GB/s", tutorial::Align::right}});
    for (int way = 0; way < 5; ++way) {
        table.add_row({ways[way].name, format("%.2f", m.ms[way]),
                       format("%.2f", 1000.0 * m.ms[way] / pieces),
                       format("%.2f", tutorial::gb_per_s(pieces * piece, m.ms[way]))});
    }
    table.print();
    std::printf(
        "\n%zu values arrived wrong, over every round and way. PCIe moves 4 KiB in well under a\n"
        "microsecond; the rest is the cost of each copy: the call, and a command for the copy\n"
        "engine. From pageable memory, SrcAccessOrderAny lets the driver read the sources after\n"
        "the call returns; SrcAccessOrderStream makes it read them in stream order. Here Any\n"
        "took %.2fx the time of Stream: the hint lets the driver choose, it does not promise\n"
        "speed. Measure before relying on it.\n"
        "\ncudaMemcpyBatchAsync with wrong attribute arrays, in a child:\n",
        wrong, m.ms[4] / m.ms[3]);
    const tutorial::ChildResult misuse =
        tutorial::run_child("batch_misuse", {std::to_string(ctx.device)});
    tutorial::print_child_output(misuse);
    std::printf("The child %s.\n\n", misuse.describe().c_str());
    // A batch saves calls: with a few pieces the fixed cost of waiting for the stream hides that.
    const std::string few = tutorial::why_too_small(
        pieces * piece, 1 << 20,
        "with fewer than 256 pieces the calls a batch saves are a small part of the whole");
    ctx.claim(tutorial::at_least("batch_beats_loop_pageable",
                                 format("one batch of %zu pageable 4 KiB copies beats a "
                                        "cudaMemcpyAsync loop (loop / stream-ordered batch)",
                                        pieces),
                                 m.ms[2] / m.ms[3], 1.2, "x",
                                 "the driver stages pageable pieces one by one in a batch too")
                  .again([&] {
                      const Medians n = again();
                      return n.ms[2] / n.ms[3];
                  }),
              few);
    ctx.claim(
        tutorial::at_least("batch_no_slower_pinned",
                           "from pinned memory, the batch takes at most 1.25 times the "
                           "loop's time (loop / batch)",
                           m.ms[0] / m.ms[1], 0.8, "x", "the batch call costs more than its copies")
            .again([&] {
                const Medians n = again();
                return n.ms[0] / n.ms[1];
            }),
        few);
    const std::string unset = tutorial::child_answer(misuse, "srcAccessOrder left unset");
    ctx.claim(tutorial::documented_error(
        "batch_needs_access_order",
        "every copy of a batch needs attributes with a valid srcAccessOrder", unset,
        "cudaErrorInvalidValue", "this driver accepts copies with no access order",
        tutorial::Entry{"Runtime API reference: cudaMemcpyBatchAsync",
                        "srcAccessOrder cudaErrorInvalidValue", "returns"}));
    return ctx.verdict(wrong == 0 && misuse.succeeded(),
                       format("every destination piece held its source piece, 5 ways x %zu "
                              "pieces",
                              pieces));
}

TUTORIAL_SECTION(batch_copies, run_batch_copies);
TUTORIAL_CHILD(batch_misuse, child_batch_misuse);
