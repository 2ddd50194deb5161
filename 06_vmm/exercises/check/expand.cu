// The course's check of exercise ex06_expand (the task is in ../expand.cu): an expandable
// segment held here calls the learner's grow() and shrink() as its blocks reach further or
// come back; a training step's allocations, then a large request, are replayed in it. The
// learner's chunks must be mapped, accessible, unmapped and released as the segment asks, so
// that the large request is served, no block moves, and device memory follows the bytes in use.
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/driver.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/patterns.hpp"
#include "common/vmm.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

// Written by the learner (exercises/expand.cu).
CUmemGenericAllocationHandle grow(CUdeviceptr end, std::size_t chunk,
                                  const CUmemAllocationProp& prop);
void shrink(CUdeviceptr last, std::size_t chunk, CUmemGenericAllocationHandle handle);

namespace {

using tutorial::Context;
using tutorial::format;
using tutorial::format_bytes;
using tutorial::MiB;
using tutorial::Result;

// Whether the driver has memory mapped at `address`. cuPointerGetAttributes answers 0 for an
// address with nothing behind it rather than an error (its entry); an error counts as "no".
bool mapped_at(CUdeviceptr address) {
    static const auto cuPointerGetAttributes = DRIVER_FUNCTION(cuPointerGetAttributes);
    int mapped = 0;
    CUpointer_attribute attribute = CU_POINTER_ATTRIBUTE_MAPPED;
    void* data = &mapped;
    return cuPointerGetAttributes(1, &attribute, &data, address) == CUDA_SUCCESS && mapped != 0;
}

// The segment: the section's, with grow and shrink handed to the learner and each of their
// results read back from the driver. Blocks are added at the end only (the pattern frees at the
// end), and the free blocks at the end go back.
class Segment {
public:
    Segment(int device, std::size_t budget) : prop_(tutorial::vmm_properties(device)) {
        static const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
        chunk_ = tutorial::vmm_granularity(prop_);
        reserved_ = tutorial::round_up(budget, chunk_);
        CU_CHECK(cuMemAddressReserve(&base_, reserved_, 0, 0, 0));
    }
    ~Segment() {
        static const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
        while (!chunks_.empty() && shrink_once()) {
        }
        if (chunks_.empty()) CU_CHECK(cuMemAddressFree(base_, reserved_));  // else left mapped
    }
    Segment(const Segment&) = delete;
    Segment& operator=(const Segment&) = delete;

    void* allocate(std::size_t bytes) {
        if (end_ + bytes > reserved_) return nullptr;
        while (mapped() < end_ + bytes)
            if (!grow_once()) return nullptr;
        const CUdeviceptr block = base_ + end_;
        blocks_[block] = {bytes, true};
        end_ += bytes;
        return reinterpret_cast<void*>(block);
    }
    void free(void* pointer) {
        blocks_.at(reinterpret_cast<CUdeviceptr>(pointer)).second = false;
        while (!blocks_.empty() && !blocks_.rbegin()->second.second) {
            end_ = blocks_.rbegin()->first - base_;
            blocks_.erase(std::prev(blocks_.end()));
        }
        while (mapped() >= end_ + chunk_)
            if (!shrink_once()) break;
    }
    std::size_t chunk() const { return chunk_; }
    std::size_t mapped() const { return chunks_.size() * chunk_; }  // by the segment's books
    std::string problem;  // what a grow or shrink left wrong, the first time

private:
    bool grow_once() {
        static const auto cuMemGetAccess = DRIVER_FUNCTION(cuMemGetAccess);
        const CUdeviceptr at = base_ + mapped();
        const CUmemGenericAllocationHandle handle = ::grow(at, chunk_, prop_);
        if (!mapped_at(at)) return note("grow() left nothing mapped at the end");
        chunks_.push_back(handle);
        unsigned long long flags = 0;
        CU_CHECK(cuMemGetAccess(&flags, &prop_.location, at));
        if (flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            return note("grow() mapped a chunk the device may not read and write");
        return true;
    }
    bool shrink_once() {
        const CUdeviceptr last = base_ + mapped() - chunk_;
        ::shrink(last, chunk_, chunks_.back());
        if (mapped_at(last)) return note("shrink() left the last chunk mapped");
        chunks_.pop_back();
        return true;
    }
    bool note(const std::string& what) {
        if (problem.empty()) problem = what;
        return false;
    }

    CUmemAllocationProp prop_;
    std::size_t chunk_ = 0;
    CUdeviceptr base_ = 0;
    std::size_t reserved_ = 0;
    std::size_t end_ = 0;
    std::vector<CUmemGenericAllocationHandle> chunks_;
    std::map<CUdeviceptr, std::pair<std::size_t, bool>> blocks_;  // bytes, in use
};

struct Event {
    int id;
    std::size_t bytes;  // 0: free allocation `id`
};

// The section's pattern: 12 layers, each allocating its output (kept) and a workspace nearly
// twice as large (freed), 5% larger a layer, in assorted sizes.
std::vector<Event> training_step(std::size_t budget) {
    const double assorted[] = {1.0, 0.93, 1.07, 0.97, 1.04};
    const auto pages = [](double bytes) { return std::size_t(bytes) / 4096 * 4096; };
    std::vector<Event> events;
    double output = 0.03 * static_cast<double>(budget);
    for (int layer = 0; layer < 12; ++layer) {
        const double size = assorted[layer % 5];
        events.push_back({2 * layer, pages(output * size)});
        events.push_back({2 * layer + 1, pages(1.8 * output / size)});
        events.push_back({2 * layer + 1, 0});
        output *= 1.05;
    }
    return events;
}

struct Run {
    std::size_t events_served = 0, events = 0;
    bool served = false;     // the large request
    std::size_t values = 0;  // values checked at the end, in blocks still in use
    std::size_t wrong = 0;   // ...not where they were written
    std::size_t excess = 0;  // most device memory taken beyond the bytes the segment has mapped
    std::size_t left = 0;    // device memory still taken once the segment is gone
    std::size_t chunk = 0;
    std::string problem;
};

// Replays the pattern and the large request (a quarter of the budget) in a fresh segment.
Run replay(int device, std::size_t budget) {
    const std::vector<Event> events = training_step(budget);
    const std::size_t request = budget / 4 / 4096 * 4096;
    const std::size_t free_at_start = tutorial::free_device_memory();
    Run run;
    run.events = events.size();
    std::map<int, std::pair<std::uint32_t*, std::size_t>> live;  // id -> where, bytes
    {
        Segment segment(device, budget);
        run.chunk = segment.chunk();
        const auto note = [&] {
            const std::size_t taken = tutorial::device_memory_used_since(free_at_start);
            const std::size_t mapped = segment.mapped();
            if (taken > mapped) run.excess = std::max(run.excess, taken - mapped);
        };
        const auto hand_out = [&](int id, std::size_t bytes) {
            auto* block = static_cast<std::uint32_t*>(segment.allocate(bytes));
            if (block == nullptr) return false;
            live[id] = {block, bytes};
            fill_on_device(block, bytes / 4, static_cast<std::uint32_t>(id));
            return true;
        };
        for (const Event& event : events) {
            if (event.bytes == 0) {
                segment.free(live.at(event.id).first);
                live.erase(event.id);
            } else if (!hand_out(event.id, event.bytes)) {
                break;
            }
            ++run.events_served;
            note();
        }
        run.served = run.events_served == run.events && hand_out(1000, request);
        note();
        for (const auto& [id, block] : live) {
            run.values += block.second / 4;
            run.wrong +=
                mismatches_on_device(block.first, block.second / 4, static_cast<std::uint32_t>(id));
        }
        for (const auto& [id, block] : live) segment.free(block.first);
        run.problem = segment.problem;
    }
    run.left = tutorial::device_memory_used_since(free_at_start);
    return run;
}

void print_run(const Run& run, std::size_t budget) {
    std::printf("budget %s: %zu of %zu events served, the large request (%s) %s\n",
                format_bytes(budget).c_str(), run.events_served, run.events,
                format_bytes(budget / 4 / 4096 * 4096).c_str(), run.served ? "served" : "refused");
    if (!run.problem.empty()) std::printf("the segment saw: %s\n", run.problem.c_str());
    std::printf("values read back wrong at their addresses: %zu of %zu\n", run.wrong, run.values);
    std::printf("device memory taken beyond the chunks mapped: at most %s (one chunk: %s)\n",
                format_bytes(run.excess).c_str(), format_bytes(run.chunk).c_str());
    std::printf("still taken once the segment was gone: %s\n\n", format_bytes(run.left).c_str());
}

// What the verdict checks in the learner's segment, and the first step where it fails: whether
// the segment serves a request depends on grow(), and blocks keep their values only if grow() and
// shrink() leave the chunks behind them mapped (cuMemMap's "not currently mapped" is a rule for
// the caller, not a promise), so these are checks of the learner's code, not claims about CUDA.
std::string first_step(const Run& run) {
    if (!run.served) {
        return run.problem.empty() || run.problem.rfind("grow", 0) != 0
                   ? "the range ran out. First step: grow() maps exactly one chunk, at `end`"
                   : run.problem + ". First step: in grow(), cuMemCreate a chunk, cuMemMap it at "
                                   "`end`, cuMemSetAccess it for prop.location, return its handle";
    }
    if (run.wrong != 0) {
        return "a chunk behind blocks in use was unmapped or mapped again. First step: "
               "shrink() unmaps only `last`, and grow() maps only at `end`";
    }
    return "";
}

void claim_memory(Context& ctx, const Run& run, const std::function<Run()>& again) {
    // compute-sanitizer takes device memory of its own: memory claims are not judged under it.
    const std::string sanitizer = tutorial::why_timing_not_judged();
    const bool unmapped = run.problem.rfind("shrink", 0) == 0;
    // The driver's count (cudaMemGetInfo) also holds its own page tables, and a module loaded
    // meanwhile: 4 chunks of room. A chunk unmapped but not released, or not unmapped at all,
    // stays taken at every shrink after it, far beyond that.
    ctx.claim(tutorial::at_most("mapped_follows_use",
                                "device memory taken stays within 4 chunks of the chunks the "
                                "segment keeps mapped, after every event (the most, from "
                                "cudaMemGetInfo; room for the driver's page tables)",
                                static_cast<double>(run.excess) / 1024.0,
                                4.0 * static_cast<double>(run.chunk) / 1024.0, " KiB",
                                unmapped ? "shrink() left the last chunk mapped. First step: "
                                           "cuMemUnmap(last, chunk) in shrink()"
                                         : "chunks went unmapped but stayed taken. First step: "
                                           "cuMemRelease(handle) after cuMemUnmap in shrink()")
                  .again([&] { return static_cast<double>(again().excess) / 1024.0; }),
              sanitizer);
    // cudaMemGetInfo reads the whole device, which others may use meanwhile: measured, and
    // measured again with a fresh segment before it is NOT held.
    ctx.claim(tutorial::at_most("all_given_back",
                                "once the segment is gone, its device memory is all back (within "
                                "one chunk, still taken afterwards from cudaMemGetInfo)",
                                static_cast<double>(run.left) / 1024.0,
                                static_cast<double>(run.chunk) / 1024.0, " KiB",
                                "chunks were left mapped or their handles unreleased. First step: "
                                "shrink() calls cuMemUnmap, then cuMemRelease")
                  .again([&] { return static_cast<double>(again().left) / 1024.0; }),
              sanitizer);
}

Result check(Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device))
        return ctx.skip("this device does not support virtual memory management");
    const std::size_t budget = tutorial::fit_in_free_memory(256 * MiB, 0.25, 2 * MiB);
    if (budget < 192 * MiB)
        return ctx.skip(tutorial::why_too_little_free(768 * MiB, "for a budget of 192 MiB"));
    // Load the kernels that fill and read the blocks now: a kernel's first launch takes device
    // memory for its module, which the replay would count.
    std::uint32_t* scratch = nullptr;
    CUDA_CHECK(cudaMalloc(&scratch, 4096));
    fill_on_device(scratch, 1024, 1);
    const std::size_t warm_wrong = mismatches_on_device(scratch, 1024, 1);
    CUDA_CHECK(cudaFree(scratch));

    const Run run = replay(ctx.device, budget);
    print_run(run, budget);
    claim_memory(ctx, run, [&] { return replay(ctx.device, budget); });
    const std::string step = first_step(run);
    return ctx.verdict(
        step.empty() && warm_wrong == 0,
        format("%zu of %zu events and the large request %s, %zu of %zu values wrong at their "
               "addresses%s%s",
               run.events_served, run.events, run.served ? "served" : "refused", run.wrong,
               run.values, step.empty() ? "" : "; ", step.c_str()));
}

}  // namespace

int main(int argc, char** argv) {
    const tutorial::Chapter program{
        "ex06_expand",
        "Exercise (chapter 06_vmm): an expandable segment's grow and shrink",
        {{"check",
          "grow, shrink: the large request served, nothing moved, memory = use",
          {},
          true,
          check}},
        {},
        "06_vmm/exercises/expand.cu"};
    return tutorial::run_chapter(program, argc, argv);
}
