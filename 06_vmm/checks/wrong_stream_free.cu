// Checks of section wrong_stream_free: runs the walkthrough of ../wrong_stream_free.cu, tables
// the three races (the free in the owner's stream, after the reader's event, in the reader's
// stream) and the reuse rules, and judges the two fixes by every value the reader copied out.
#include "06_vmm/wrong_stream_free.cu"

#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <string>

using tutorial::format;
using tutorial::format_bytes;

namespace {

const char* const how_freed[3] = {"cudaFreeAsync in the owner's stream (the bug)",
                                  "owner waits for the reader's event, then frees",
                                  "cudaFreeAsync in the reader's stream"};
const char* const settings_named[setting_count] = {
    "all three on (a new pool)", "FollowEventDependencies off", "AllowOpportunistic off",
    "AllowInternalDependencies off", "all three off"};

std::string address(const void* p) {
    return format("%p", p);
}

void print_races(const Found& f, std::size_t count) {
    tutorial::Table table({{"how the owner gave the block back"},
                           {"block"},
                           {"owner's next allocation"},
                           {"same block"},
                           {"values read wrong", tutorial::Align::right}});
    table.named("races");
    const Race* races[3] = {&f.bug, &f.after_event, &f.in_reader_stream};
    for (int i = 0; i < 3; ++i) {
        const Race& r = *races[i];
        table.add_row({how_freed[i], address(r.block), address(r.next),
                       r.next == r.block ? "yes" : "no", format("%zu of %zu", r.wrong, count)});
    }
    table.print();
}

void print_rules(const Rules& rules) {
    std::printf("\n");
    tutorial::Table table({{"reuse rules"},
                           {"free completed, its stream synced by the CPU"},
                           {"free pending, stream waits on an event after it"},
                           {"free pending, no dependency"}});
    table.named("reuse");
    for (int s = 0; s < setting_count; ++s) {
        table.add_row({settings_named[s], rules.reused[s][0] ? "reused" : "new block",
                       rules.reused[s][1] ? "reused" : "new block",
                       rules.reused[s][2] ? "reused" : "new block"});
    }
    table.print();
}

// "yes/no/no" for a setting's three cases, for the observed claims.
std::string cases_text(const Rules& rules, int s) {
    return format("%s / %s / %s", rules.reused[s][0] ? "reused" : "new block",
                  rules.reused[s][1] ? "reused" : "new block",
                  rules.reused[s][2] ? "reused" : "new block");
}

// What the new pool says of its reuse rules, and what each setting did (observed). Each rule's
// entry gives its own "(default enabled)": one documented claim per rule.
void claim_rules(tutorial::Context& ctx, const Rules& r) {
    ctx.claim(tutorial::documented(
        "follow_events_default_on", "a new pool has cudaMemPoolReuseFollowEventDependencies on",
        r.defaults[0] == 1, format("it reads %d", r.defaults[0]), "the rule was off in a new pool",
        tutorial::Entry{"Runtime API reference: cudaMemPoolReuseFollowEventDependencies",
                        "cudaMemPoolReuseFollowEventDependencies default enabled", "defaults"}));
    ctx.claim(tutorial::documented(
        "opportunistic_default_on", "a new pool has cudaMemPoolReuseAllowOpportunistic on",
        r.defaults[1] == 1, format("it reads %d", r.defaults[1]), "the rule was off in a new pool",
        tutorial::Entry{"Runtime API reference: cudaMemPoolReuseAllowOpportunistic",
                        "cudaMemPoolReuseAllowOpportunistic default enabled", "defaults"}));
    ctx.claim(tutorial::documented(
        "internal_deps_default_on", "a new pool has cudaMemPoolReuseAllowInternalDependencies on",
        r.defaults[2] == 1, format("it reads %d", r.defaults[2]), "the rule was off in a new pool",
        tutorial::Entry{"Runtime API reference: cudaMemPoolReuseAllowInternalDependencies",
                        "cudaMemPoolReuseAllowInternalDependencies default enabled", "defaults"}));
    ctx.claim(tutorial::observed(
        "reuse_with_rules_on",
        "with the rules on, another stream got a block freed earlier, and one freed behind an "
        "event it waited for",
        r.reused[0][0] && r.reused[0][1],
        cases_text(r, 0) + " (completed, CPU synced / pending, event / pending, no dependency)",
        "each rule only allows the allocator to reuse memory freed in another stream; none "
        "says that it will"));
    // A free whose stream the CPU synchronized is not among them: the Guide's stream-ordered
    // allocator chapter says the allocator still reuses memory made available that way with
    // opportunistic reuse off (the first column, reused under every setting here).
    ctx.claim(tutorial::observed(
        "no_reuse_with_rules_off",
        "with all three rules off, another stream never got a free still pending",
        !r.reused[4][1] && !r.reused[4][2], cases_text(r, 4),
        "the entries allow reuse where a rule is on; none names what the allocator does with "
        "all three off"));
}

}  // namespace

tutorial::Result run_wrong_stream_free(tutorial::Context& ctx) {
    if (tutorial::device_attribute(ctx.device, cudaDevAttrMemoryPoolsSupported) != 1) {
        return ctx.skip("memoryPoolsSupported = 0: no stream-ordered pools on this device");
    }
    // Three blocks at most at once (the block, the owner's next, the reader's copy).
    const std::size_t bytes = ctx.size_or(tutorial::fit_in_free_memory(
        (ctx.quick() ? 16 : 64) * tutorial::MiB, 0.25 / 3, 2 * tutorial::MiB));
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::printf(
        "A pool of our own (release threshold UINT64_MAX). The owner's stream allocates %s,\n"
        "fills it and records an event; the reader's stream waits for that, is busy for %.0f ms,\n"
        "then copies the block out. Meanwhile the owner gives the block back, allocates the same\n"
        "size again and fills the new block. Then a fresh pool per case: stream A frees a block,\n"
        "stream B allocates the same size; reused = B got A's block.\n\n",
        format_bytes(bytes).c_str(), reader_delay_ms);
    const Found f = walkthrough(bytes, ctx.device);
    print_races(f, count);
    print_rules(f.rules);
    std::printf(
        "\nThe bug raises no error anywhere: every call returned cudaSuccess, and the reader\n"
        "simply copied out whatever the block held when its copy ran. Order the free after the\n"
        "last use in every stream that uses the block: an event, or the free in that stream.\n\n");

    ctx.claim(tutorial::observed(
        "bug_reads_next",
        "freed in the owner's stream while the reader still had to copy it, the block went to "
        "the owner's next allocation, and the reader copied out its new values",
        f.bug.next == f.bug.block && f.bug.wrong == count,
        format("%zu of %zu values wrong; the next allocation %s", f.bug.wrong, count,
               f.bug.next == f.bug.block ? "was the same block" : "was another block"),
        "the cudaFreeAsync entry says the allocation must not be accessed after stream execution "
        "reaches the free: what a late reader gets is undefined"));
    const bool event_right = f.after_event.wrong == 0;
    ctx.claim(tutorial::documented(
        "event_orders_free",
        "with the owner's stream waiting for the reader's event before the free, the reader "
        "copied out every value right",
        event_right, format("%zu values wrong", f.after_event.wrong),
        "the free ran before the reader's copy",
        tutorial::Entry{"Runtime API reference: cudaStreamWaitEvent",
                        "future work submitted to stream", "Makes"}));
    // cudaFreeAsync inserts the free into the reader's stream, after its copy: the copy is then
    // a compliant access, made before stream execution reaches the free. That the owner's next
    // allocation, in another stream, does not get the block while the free is pending is the
    // allocator's bound: it may reallocate only where compliant accesses will not overlap in time.
    const bool reader_right = f.in_reader_stream.wrong == 0;
    ctx.claim(tutorial::documented(
        "free_in_reader_right",
        "with the free queued in the reader's stream after its copy, the reader copied out every "
        "value right",
        reader_right, format("%zu values wrong", f.in_reader_stream.wrong),
        "the block was reallocated before the copy queued ahead of its free in the same stream",
        tutorial::Entry{"Runtime API reference: Stream Ordered Memory Allocator",
                        "compliant accesses overlap", "will not"}));
    claim_rules(ctx, f.rules);
    return ctx.verdict(
        event_right && reader_right,
        format("with the free ordered after the read, the reader copied out every value right "
               "(%zu and %zu wrong); the bug got %zu of %zu wrong",
               f.after_event.wrong, f.in_reader_stream.wrong, f.bug.wrong, count));
}

TUTORIAL_SECTION(wrong_stream_free, run_wrong_stream_free);
