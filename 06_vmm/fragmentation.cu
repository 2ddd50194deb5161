// Section fragmentation: why can a caching allocator refuse a request while its free blocks add
// up to more, and how does one growing range of addresses (an "expandable segment") avoid it?
// Alone:
//   nvcc -std=c++17 -I. 06_vmm/fragmentation.cu common/standalone.cu -o build/fragmentation
//   (or in 06_vmm/: nvcc -std=c++17 -I.. fragmentation.cu ../common/standalone.cu
//       -o ../build/fragmentation)  (on the same line)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <vector>
namespace {

// The experiment is walkthrough(), below these declarations: one allocation pattern replayed on
// two allocators within one budget of device memory, then a request for a quarter of it. The
// allocators' code and the replay follow the walkthrough.

// One event of an allocation pattern: allocation `id` of `bytes`, or (bytes 0) its free.
struct Event {
    int id;
    std::size_t bytes;
};
// The pattern: a forward pass through 12 layers, each with an output kept and a workspace freed.
std::vector<Event> training_step(std::size_t budget);

// What an allocator hands out and holds, and its largest free block.
struct Books {
    std::size_t used = 0;  // in blocks handed out
    std::size_t held = 0;  // taken from the device: cudaMalloc'd, or mapped
    std::size_t largest_free = 0;
};

// A block still in use at the end of a replay: where, how large, its values read wrong.
struct Kept {
    CUdeviceptr address;
    std::size_t bytes;
    std::size_t wrong;
};

// What a replay found: the books after each event and after the large request, the device
// memory taken meanwhile, the answer, and what the blocks still in use read back.
struct Replay {
    std::vector<Books> after;        // after each event of the pattern, then after the request
    std::vector<std::size_t> taken;  // device memory taken meanwhile (cudaMemGetInfo)
    bool pattern_fit = true;         // every allocation of the pattern was served
    bool served = false;             // ...and the large request
    std::vector<Kept> kept;          // the blocks in use at the end, the large one last
    std::size_t wrong = 0;           // values not found where they were written, in all
};

// The pattern, then the large request, on `allocator` (defined after the walkthrough).
template <typename Allocator>
Replay replay(Allocator& allocator, const std::vector<Event>& events, std::size_t request);

// The blocks an allocator has carved out of device memory, by address: how large, in use or
// free, and the segment (one cudaMalloc) each belongs to. Blocks of two segments never merge.
struct Block {
    std::size_t bytes;
    bool used;
    CUdeviceptr segment;
};
using Blocks = std::map<CUdeviceptr, Block>;

// 1. A caching allocator, as deep learning frameworks have on cudaMalloc: it keeps what is
//    freed and serves later requests from it; a new segment only when no free block fits.
class CachingAllocator {
public:
    explicit CachingAllocator(std::size_t budget) : budget_(budget) {}
    ~CachingAllocator();  // its segments go back with cudaFree
    CachingAllocator(const CachingAllocator&) = delete;
    CachingAllocator& operator=(const CachingAllocator&) = delete;

    // nullptr: refused, since no free block fits and a new segment would pass the budget.
    void* allocate(std::size_t bytes);
    void free(void* pointer);
    Books books() const;

private:
    void release_free_segments();  // before refusing: segments with nothing in use go back

    std::size_t budget_;
    std::size_t reserved_ = 0;
    std::map<CUdeviceptr, std::size_t> segments_;  // address -> bytes
    Blocks blocks_;
};

// 2. An expandable segment: one range of addresses for the whole budget, reserved once, with
//    physical memory mapped behind it chunk by chunk as far as its blocks reach, and no further.
class ExpandableSegment {
public:
    ExpandableSegment(int device, std::size_t budget);  // reserves the addresses, maps nothing
    ~ExpandableSegment();  // the last chunks unmapped and released, the addresses freed
    ExpandableSegment(const ExpandableSegment&) = delete;
    ExpandableSegment& operator=(const ExpandableSegment&) = delete;

    // nullptr: refused, since the budget's addresses are used up.
    void* allocate(std::size_t bytes);
    void free(void* pointer);
    Books books() const;
    std::size_t chunk() const { return chunk_; }

private:
    void grow();    // one more chunk, mapped right after the last one
    void shrink();  // the last chunk unmapped and released
    std::size_t mapped() const { return chunks_.size() * chunk_; }

    CUmemAllocationProp prop_{};
    CUmemAccessDesc access_{};
    std::size_t chunk_ = 0;
    CUdeviceptr base_ = 0;
    std::size_t reserved_ = 0;
    std::size_t end_ = 0;  // where the last block ends: what must be mapped
    std::vector<CUmemGenericAllocationHandle> chunks_;
    Blocks blocks_;
};

struct Found {
    std::size_t request = 0;  // the large request, after the pattern
    Replay caching, segment;
    std::size_t chunk = 0;  // the expandable segment's granularity
};

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step caching_replay{"the pattern replayed on the caching allocator"};
constexpr tutorial::Step segment_replay{"the pattern replayed on the expandable segment"};

Found walkthrough(int device, std::size_t budget) {
    Found found;
    // The pattern, and then a large request: a quarter of the budget (a longer batch, say).
    const std::vector<Event> events = training_step(budget);
    found.request = std::size_t(0.25 * static_cast<double>(budget)) / 4096 * 4096;

    // 1. The caching allocator replays it on cudaMalloc'd segments, within the budget.
    {
        CachingAllocator caching(budget);
        const tutorial::During during(caching_replay);
        found.caching = replay(caching, events, found.request);
    }  // its segments go back with cudaFree

    // 2. The expandable segment replays it in one reserved range, mapping 2 MiB chunks.
    {
        ExpandableSegment segment(device, budget);
        found.chunk = segment.chunk();
        const tutorial::During during(segment_replay);
        found.segment = replay(segment, events, found.request);
    }  // its last chunks are unmapped and released, its addresses freed
    return found;
}

// The pattern both allocators replay, in fractions of the budget: a forward pass through 12
// layers whose activations grow by 5% a layer, in assorted sizes. Each layer allocates its
// output, kept for the backward pass, then a workspace nearly twice as large, freed when the
// layer is done. Sizes are whole 4 KiB pages.
std::vector<Event> training_step(std::size_t budget) {
    const double assorted[] = {1.0, 0.93, 1.07, 0.97, 1.04};
    const auto pages = [](double bytes) { return std::size_t(bytes) / 4096 * 4096; };
    std::vector<Event> events;
    double output = 0.03 * static_cast<double>(budget);
    for (int layer = 0; layer < 12; ++layer) {
        const double size = assorted[layer % 5];
        events.push_back({2 * layer, pages(output * size)});            // the output, kept
        events.push_back({2 * layer + 1, pages(1.8 * output / size)});  // the workspace...
        events.push_back({2 * layer + 1, 0});                           // ...freed
        output *= 1.05;
    }
    return events;
}

// Best fit: the smallest free block of at least `bytes`, or blocks.end().
Blocks::iterator best_fit(Blocks& blocks, std::size_t bytes) {
    auto best = blocks.end();
    for (auto it = blocks.begin(); it != blocks.end(); ++it) {
        if (!it->second.used && it->second.bytes >= bytes &&
            (best == blocks.end() || it->second.bytes < best->second.bytes))
            best = it;
    }
    return best;
}

// Hands out the first `bytes` of the free block `it`; the rest stays free behind it (a split).
CUdeviceptr take(Blocks& blocks, Blocks::iterator it, std::size_t bytes) {
    Block& block = it->second;
    if (block.bytes > bytes)
        blocks.emplace(it->first + bytes, Block{block.bytes - bytes, false, block.segment});
    block.bytes = bytes;
    block.used = true;
    return it->first;
}

// The block at `address` is free again: it merges with free neighbours of its own segment.
Blocks::iterator give_back(Blocks& blocks, CUdeviceptr address) {
    auto it = blocks.find(address);
    it->second.used = false;
    const auto joins = [](const auto& a, const auto& b) {
        return !a->second.used && !b->second.used && a->second.segment == b->second.segment;
    };
    if (auto next = std::next(it); next != blocks.end() && joins(it, next)) {
        it->second.bytes += next->second.bytes;
        blocks.erase(next);
    }
    if (it != blocks.begin()) {
        if (auto before = std::prev(it); joins(before, it)) {
            before->second.bytes += it->second.bytes;
            blocks.erase(it);
            return before;
        }
    }
    return it;
}

Books books_of(const Blocks& blocks, std::size_t held) {
    Books books{0, held, 0};
    for (const auto& [address, block] : blocks) {
        if (block.used)
            books.used += block.bytes;
        else if (block.bytes > books.largest_free)
            books.largest_free = block.bytes;
    }
    return books;
}

std::size_t round_up(std::size_t bytes, std::size_t multiple) {
    return (bytes + multiple - 1) / multiple * multiple;
}

// 1. The caching allocator.
CachingAllocator::~CachingAllocator() {
    for (const auto& [address, bytes] : segments_)
        CUDA_CHECK(cudaFree(reinterpret_cast<void*>(address)));
}

void* CachingAllocator::allocate(std::size_t bytes) {
    bytes = round_up(bytes, 512);
    auto it = best_fit(blocks_, bytes);
    if (it == blocks_.end()) {
        const std::size_t segment = round_up(bytes, 2 << 20);
        if (reserved_ + segment > budget_) release_free_segments();
        if (reserved_ + segment > budget_) return nullptr;  // cudaMalloc is never asked
        void* memory = nullptr;
        CUDA_CHECK(cudaMalloc(&memory, segment));
        const CUdeviceptr address = reinterpret_cast<CUdeviceptr>(memory);
        segments_[address] = segment;
        reserved_ += segment;
        it = blocks_.emplace(address, Block{segment, false, address}).first;
    }
    return reinterpret_cast<void*>(take(blocks_, it, bytes));
}

void CachingAllocator::free(void* pointer) {
    give_back(blocks_, reinterpret_cast<CUdeviceptr>(pointer));
}

Books CachingAllocator::books() const {
    return books_of(blocks_, reserved_);
}

void CachingAllocator::release_free_segments() {
    for (auto it = segments_.begin(); it != segments_.end();) {
        const Block& first = blocks_.at(it->first);
        if (first.used || first.bytes != it->second) {
            ++it;
            continue;
        }
        CUDA_CHECK(cudaFree(reinterpret_cast<void*>(it->first)));
        blocks_.erase(it->first);
        reserved_ -= it->second;
        it = segments_.erase(it);
    }
}

// 2. The expandable segment.
ExpandableSegment::ExpandableSegment(int device, std::size_t budget) {
    const auto cuMemGetAllocationGranularity = DRIVER_FUNCTION(cuMemGetAllocationGranularity);
    const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    prop_.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop_.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop_.location.id = device;
    access_.location = prop_.location;
    access_.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemGetAllocationGranularity(&chunk_, &prop_, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    reserved_ = round_up(budget, chunk_);
    CU_CHECK(cuMemAddressReserve(&base_, reserved_, 0, 0, 0));  // addresses only
}

ExpandableSegment::~ExpandableSegment() {
    const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    while (!chunks_.empty()) shrink();
    CU_CHECK(cuMemAddressFree(base_, reserved_));
}

// A free block that fits, else a new one at the end, with chunks mapped to cover it.
void* ExpandableSegment::allocate(std::size_t bytes) {
    bytes = round_up(bytes, 512);
    auto it = best_fit(blocks_, bytes);
    if (it == blocks_.end()) {
        if (end_ + bytes > reserved_) return nullptr;  // the budget's addresses are used up
        while (mapped() < end_ + bytes) grow();
        it = blocks_.emplace(base_ + end_, Block{bytes, false, base_}).first;
        end_ += bytes;
    }
    return reinterpret_cast<void*>(take(blocks_, it, bytes));
}

// A free block at the end goes, and so do the chunks behind the last block in use.
void ExpandableSegment::free(void* pointer) {
    const auto it = give_back(blocks_, reinterpret_cast<CUdeviceptr>(pointer));
    if (std::next(it) == blocks_.end()) {
        end_ = it->first - base_;
        blocks_.erase(it);
    }
    while (mapped() >= end_ + chunk_) shrink();
}

Books ExpandableSegment::books() const {
    return books_of(blocks_, mapped());
}

// Grow: one more chunk of physical memory, mapped right after the last one, made usable.
void ExpandableSegment::grow() {
    const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    const CUdeviceptr at = base_ + mapped();
    CUmemGenericAllocationHandle chunk = 0;
    CU_CHECK(cuMemCreate(&chunk, chunk_, &prop_, 0));
    CU_CHECK(cuMemMap(at, chunk_, 0, chunk, 0));
    CU_CHECK(cuMemSetAccess(at, chunk_, &access_, 1));  // a new mapping starts with none
    chunks_.push_back(chunk);
}

// Shrink: the last chunk unmapped and released; its memory goes back to the driver.
void ExpandableSegment::shrink() {
    const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
    CU_CHECK(cuMemUnmap(base_ + mapped() - chunk_, chunk_));
    CU_CHECK(cuMemRelease(chunks_.back()));
    chunks_.pop_back();
}

std::size_t free_device_memory_now() {
    std::size_t free_bytes = 0;
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return free_bytes;
}

constexpr int large_id = 1000;  // the large request's pattern, beside the events' ids

// The pattern, then the large request. Each block is filled with its own pattern when it is
// handed out; at the end a kernel reads every block still in use at the address it was given.
template <typename Allocator>
Replay replay(Allocator& allocator, const std::vector<Event>& events, std::size_t request) {
    Replay found;
    const std::size_t free_at_start = free_device_memory_now();
    std::map<int, std::pair<std::uint32_t*, std::size_t>> live;  // id -> where, how many values
    const auto note = [&] {
        const std::size_t free_now = free_device_memory_now();
        found.after.push_back(allocator.books());
        found.taken.push_back(free_now < free_at_start ? free_at_start - free_now : 0);
    };
    for (const Event& event : events) {
        if (event.bytes == 0) {
            allocator.free(live.at(event.id).first);
            live.erase(event.id);
        } else {
            auto* block = static_cast<std::uint32_t*>(allocator.allocate(event.bytes));
            found.pattern_fit = found.pattern_fit && block != nullptr;
            if (block == nullptr) break;
            live[event.id] = {block, event.bytes / sizeof(std::uint32_t)};
            fill_on_device(block, event.bytes / sizeof(std::uint32_t), event.id);
        }
        note();
    }
    auto* large = static_cast<std::uint32_t*>(allocator.allocate(request));
    found.served = large != nullptr;
    if (found.served) {
        live[large_id] = {large, request / sizeof(std::uint32_t)};
        fill_on_device(large, request / sizeof(std::uint32_t), large_id);
    }
    note();
    for (const auto& [id, block] : live) {
        const std::size_t wrong = mismatches_on_device(block.first, block.second, id);
        found.kept.push_back({reinterpret_cast<CUdeviceptr>(block.first),
                              block.second * sizeof(std::uint32_t), wrong});
        found.wrong += wrong;
    }
    for (const auto& [id, block] : live) allocator.free(block.first);
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::size_t budget = std::size_t{2} << 30;
    CUDA_CHECK(cudaSetDevice(0));
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found f = walkthrough(0, budget);
    times.print();
    const auto mib = [](std::size_t bytes) { return static_cast<double>(bytes) / (1 << 20); };
    const Books& c = f.caching.after.back();
    // The card's numbers: the caching allocator's free blocks against the request, and how far
    // the segment's mapping (and the driver's count of it) strayed from what was in use.
    std::size_t excess = 0, gap = 0;
    for (std::size_t i = 0; i < f.segment.after.size(); ++i) {
        const Books& b = f.segment.after[i];
        const std::size_t taken = f.segment.taken[i];
        excess = std::max(excess, b.held > b.used ? b.held - b.used : 0);
        gap = std::max(gap, taken > b.held ? taken - b.held : b.held - taken);
    }
    std::printf(
        "%.2fx: within a %.0f MiB budget the caching allocator's free blocks added up to "
        "%.2f times the %.0f MiB request, but its largest was %.1f MiB, so it %s; the "
        "expandable segment %s it, and kept within %zu KiB of what was in use; the "
        "driver's count strayed from the mapped bytes by %.1f MiB at most\n",
        mib(c.held - c.used) / mib(f.request), mib(budget), mib(c.held - c.used) / mib(f.request),
        mib(f.request), mib(c.largest_free), f.caching.served ? "served it" : "refused",
        f.segment.served ? "served" : "refused", excess / 1024, mib(gap));
    std::printf("a budget of %.0f MiB, then a request for %.1f MiB:\n", mib(budget),
                mib(f.request));
    std::printf(
        "caching allocator: %s; it held %.1f MiB, %.1f MiB in use, %.1f MiB free in\n"
        "  blocks (%.2f times the request), the largest %.1f MiB\n",
        f.caching.served ? "served" : "refused", mib(c.held), mib(c.used), mib(c.held - c.used),
        mib(c.held - c.used) / mib(f.request), mib(c.largest_free));
    const Books& s = f.segment.after.back();
    std::printf("expandable segment: %s; %.1f MiB mapped for %.1f MiB in use\n",
                f.segment.served ? "served" : "refused", mib(s.held), mib(s.used));
    std::printf("values read wrong at their addresses: %zu and %zu\n", f.caching.wrong,
                f.segment.wrong);
    return f.segment.served && f.caching.wrong + f.segment.wrong == 0 ? 0 : 1;
}
#endif
