// The process plumbing of a master/worker batch: see slice_workers.hpp.
#include "slice_workers.hpp"

#include "channel.hpp"
#include "common/patterns.hpp"
#include "common/text.hpp"
#include "ipc_common.hpp"

#include <memory>

namespace {

// What the master learns from a worker once it has ended: the addresses it printed, the sum it
// answered on its channel ("checksum N"), and its slice of the result checked.
void check_worker(WorkerOutcome& outcome, const std::string& answer, std::uint32_t seed,
                  const std::uint32_t* result) {
    const std::string& text = outcome.child.output;
    const std::size_t at = text.find("input at ");
    if (at != std::string::npos) outcome.mapped = text.substr(at, text.find(';', at) - at);
    const std::string expected = tutorial::format(
        "checksum %llu",
        static_cast<unsigned long long>(slice_sum(outcome.offset, outcome.count, seed)));
    outcome.checksum_ok = answer == expected;
    // The worker wrote 2 * x + 1 over its slice of the pattern.
    outcome.results_ok = mismatches_on_device(result + outcome.offset, outcome.count, seed, {2, 1},
                                              outcome.offset) == 0;
}

}  // namespace

std::vector<WorkerOutcome> run_slice_workers(int device, const std::vector<std::string>& task_lines,
                                             const std::vector<Slice>& slices, int crash_worker,
                                             std::uint32_t seed, const std::uint32_t* result) {
    const int workers = static_cast<int>(task_lines.size());
    std::vector<WorkerOutcome> outcomes;
    std::vector<std::unique_ptr<tutorial::ChildProcess>> children;
    std::vector<std::unique_ptr<Channel>> channels;
    for (int w = 0; w < workers; ++w) {
        channels.push_back(std::make_unique<Channel>());
        children.push_back(std::make_unique<tutorial::ChildProcess>(
            "slice_worker",
            std::vector<std::string>{std::to_string(device), w == crash_worker ? "crash" : "work"},
            channels.back()->worker_end()));
        channels.back()->close_worker_end();
        children.back()->send(task_lines[w]);
        outcomes.push_back({slices[w].offset, slices[w].count, {}, false, false, ""});
    }
    // One deadline for the whole batch, not one per worker: a stuck batch of 16 workers costs
    // 60 s, not 16 minutes.
    const tutorial::Deadline deadline(60.0);
    for (int w = 0; w < workers; ++w) {
        outcomes[w].child = children[w]->wait(deadline.seconds_left());
        std::string answer;  // sent before the worker ended, so it is waiting in the socket
        if (!read_line(channels[w]->master_end(), answer, 1.0)) answer = "(no answer)";
        check_worker(outcomes[w], answer, seed, result);
    }
    return outcomes;
}
