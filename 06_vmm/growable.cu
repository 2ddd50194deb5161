// Section `growable`: "realloc" for device memory. A VMM buffer reserves a large range of
// addresses once and maps more physical memory at its end as it grows, copying nothing; the
// classic way allocates a bigger buffer, copies, and frees the old one.
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/harness/report.hpp"
#include "common/timing.hpp"
#include "common/vmm.hpp"
#include "common/harness/chapter.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

using tutorial::Align;
using tutorial::format;
using tutorial::format_bytes;
using tutorial::HostTimer;
using tutorial::round_up;

namespace {

// lesson:begin
std::size_t used_device_memory() {
    std::size_t free_bytes = 0;
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return total - free_bytes;
}

// A device buffer that grows in place: its address never changes unless the reserved range
// runs out, and even then no byte is copied. (The driver functions are looked up through the
// runtime the first time each is needed; see common/driver.hpp.)
class GrowableBuffer {
public:
    GrowableBuffer(int device, std::size_t reserve) {
        static const auto cuMemGetAllocationGranularity =
            DRIVER_FUNCTION(cuMemGetAllocationGranularity);
        static const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
        prop_.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop_.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop_.location.id = device;
        access_.location = prop_.location;  // the device that owns the memory may use it
        access_.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        CU_CHECK(
            cuMemGetAllocationGranularity(&granularity_, &prop_, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        reserved_ = round_up(reserve, granularity_);
        CU_CHECK(cuMemAddressReserve(&base_, reserved_, 0, 0, 0));  // addresses only
    }
    ~GrowableBuffer() {
        static const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
        static const auto cuMemRelease = DRIVER_FUNCTION(cuMemRelease);
        static const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
        // cuMemUnmap takes one whole mapped range at a time (its entry), so one call per chunk.
        std::size_t offset = 0;
        for (const Chunk& chunk : chunks_) {
            CU_CHECK(cuMemUnmap(base_ + offset, chunk.bytes));
            CU_CHECK(cuMemRelease(chunk.memory));
            offset += chunk.bytes;
        }
        CU_CHECK(cuMemAddressFree(base_, reserved_));
    }
    GrowableBuffer(const GrowableBuffer&) = delete;
    GrowableBuffer& operator=(const GrowableBuffer&) = delete;

    // Creates the missing physical memory and maps it right after the part already mapped.
    // Returns true if the range had to be moved to a bigger reservation first.
    bool grow_to(std::size_t bytes) {
        static const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
        static const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
        static const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
        bytes = round_up(bytes, granularity_);
        if (bytes <= size_) return false;
        const bool moved = bytes > reserved_;
        if (moved) move_to_reservation(4 * bytes);
        Chunk chunk{0, bytes - size_};
        CU_CHECK(cuMemCreate(&chunk.memory, chunk.bytes, &prop_, 0));
        CU_CHECK(cuMemMap(base_ + size_, chunk.bytes, 0, chunk.memory, 0));
        CU_CHECK(cuMemSetAccess(base_ + size_, chunk.bytes, &access_, 1));  // the new part only
        chunks_.push_back(chunk);
        size_ = bytes;
        return moved;
    }
    std::uint32_t* data() const { return reinterpret_cast<std::uint32_t*>(base_); }
    std::size_t chunks() const { return chunks_.size(); }
    // At the last move: the buffer's size, and the device memory taken while its chunks were
    // mapped at both the old and the new range (cudaMemGetInfo before and during; 0 if less).
    std::size_t moved_bytes() const { return moved_bytes_; }
    std::size_t taken_while_mapped_twice() const { return taken_while_mapped_twice_; }

private:
    struct Chunk {
        CUmemGenericAllocationHandle memory;
        std::size_t bytes;
    };

    // A bigger range of addresses, with the same physical chunks mapped into it at the same
    // offsets: the contents come along without being copied.
    void move_to_reservation(std::size_t bytes) {
        static const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
        static const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
        static const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
        static const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
        static const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
        const std::size_t in_use_before = used_device_memory();
        CUdeviceptr bigger = 0;
        CU_CHECK(cuMemAddressReserve(&bigger, bytes, 0, 0, 0));
        std::size_t offset = 0;
        for (const Chunk& chunk : chunks_) {
            CU_CHECK(cuMemMap(bigger + offset, chunk.bytes, 0, chunk.memory, 0));
            offset += chunk.bytes;
        }
        const std::size_t in_use_during = used_device_memory();
        moved_bytes_ = size_;
        taken_while_mapped_twice_ =
            in_use_during > in_use_before ? in_use_during - in_use_before : 0;
        if (size_ > 0) CU_CHECK(cuMemSetAccess(bigger, size_, &access_, 1));
        offset = 0;
        for (const Chunk& chunk : chunks_) {  // the old mappings, one whole mapping a call
            CU_CHECK(cuMemUnmap(base_ + offset, chunk.bytes));
            offset += chunk.bytes;
        }
        CU_CHECK(cuMemAddressFree(base_, reserved_));
        base_ = bigger;
        reserved_ = bytes;
    }

    CUmemAllocationProp prop_{};
    CUmemAccessDesc access_{};
    std::size_t granularity_ = 0;
    CUdeviceptr base_ = 0;
    std::size_t reserved_ = 0;
    std::size_t size_ = 0;
    std::vector<Chunk> chunks_;
    std::size_t moved_bytes_ = 0;
    std::size_t taken_while_mapped_twice_ = 0;
};
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

struct Moved {
    std::size_t bytes = 0;  // the buffer's size at its last move to a bigger reservation
    std::size_t taken = 0;  // device memory taken meanwhile
};

struct Step {
    double ms;
    std::size_t peak;  // device memory in use at the step's highest point, above the baseline
    std::size_t survived_wrong;
    bool moved;
};

constexpr std::uint32_t seed = 5;

// The classic way: a bigger cudaMalloc, a copy of everything so far, a cudaFree of the old one.
std::vector<Step> grow_by_copying(const std::vector<std::size_t>& sizes) {
    std::vector<Step> steps;
    const std::size_t baseline = used_device_memory();
    std::uint32_t* buffer = nullptr;
    std::size_t size = 0;
    for (std::size_t bytes : sizes) {
        HostTimer timer;
        std::uint32_t* bigger = nullptr;
        CUDA_CHECK(cudaMalloc(&bigger, bytes));
        if (buffer != nullptr) {
            CUDA_CHECK(cudaMemcpy(bigger, buffer, size, cudaMemcpyDeviceToDevice));
        }
        const std::size_t peak = used_device_memory() - baseline;
        if (buffer != nullptr) CUDA_CHECK(cudaFree(buffer));
        CUDA_CHECK(cudaDeviceSynchronize());
        const double ms = timer.elapsed_ms();
        buffer = bigger;
        const std::size_t wrong = mismatches_on_device(buffer, size / 4, seed);
        size = bytes;
        fill_on_device(buffer, size / 4, seed);
        steps.push_back({ms, peak, wrong, false});
    }
    CUDA_CHECK(cudaFree(buffer));
    return steps;
}

// The VMM way, through the GrowableBuffer above.
std::vector<Step> grow_in_place(int device, const std::vector<std::size_t>& sizes,
                                std::size_t reservation, Moved& moved_at_last) {
    std::vector<Step> steps;
    const std::size_t baseline = used_device_memory();
    GrowableBuffer buffer(device, reservation);
    std::size_t size = 0;
    for (std::size_t bytes : sizes) {
        HostTimer timer;
        const bool moved = buffer.grow_to(bytes);
        CUDA_CHECK(cudaDeviceSynchronize());
        const double ms = timer.elapsed_ms();
        const std::size_t peak = used_device_memory() - baseline;
        const std::size_t wrong = mismatches_on_device(buffer.data(), size / 4, seed);
        size = bytes;
        fill_on_device(buffer.data(), size / 4, seed);
        steps.push_back({ms, peak, wrong, moved});
    }
    std::printf("The VMM buffer ended as %zu physical chunks behind one range of addresses.\n",
                buffer.chunks());
    moved_at_last = {buffer.moved_bytes(), buffer.taken_while_mapped_twice()};
    std::printf(
        "At its last move, %s of chunks were mapped at the old and the new range at once:\n"
        "device memory in use rose by %s meanwhile.\n\n",
        format_bytes(moved_at_last.bytes).c_str(), format_bytes(moved_at_last.taken).c_str());
    return steps;
}

struct GranuleSteps {
    std::vector<double> copy_ms, vmm_ms;  // one of each per start size
    std::size_t wrong = 0;                // values that did not survive
    std::size_t steps = 0;                // grow steps of each kind checked
};

// Growing by one granule at each size in `starts`, both ways, the median of 3 tries: a table row
// each.
GranuleSteps grow_by_one_granule(int device, const std::vector<std::size_t>& starts) {
    // The granularity of the plain device memory a GrowableBuffer maps.
    const std::size_t step = tutorial::vmm_granularity(tutorial::vmm_properties(device));
    tutorial::Table table({{"buffer size", Align::right},
                           {"grow by", Align::right},
                           {"cudaMalloc+copy ms", Align::right},
                           {"VMM ms", Align::right}});
    GranuleSteps result;
    // Under compute-sanitizer timings are not judged, so one try is enough there.
    const int attempts = tutorial::why_timing_not_judged().empty() ? 3 : 1;
    for (std::size_t start : starts) {
        std::vector<double> copy_ms, vmm_ms;
        for (int attempt = 0; attempt < attempts; ++attempt) {
            const std::vector<Step> copied = grow_by_copying({start, start + step});
            GrowableBuffer buffer(device, 2 * start);
            buffer.grow_to(start);
            fill_on_device(buffer.data(), start / 4, seed);
            HostTimer timer;
            buffer.grow_to(start + step);
            CUDA_CHECK(cudaDeviceSynchronize());
            vmm_ms.push_back(timer.elapsed_ms());
            copy_ms.push_back(copied[1].ms);
            ++result.steps;
            result.wrong +=
                copied[1].survived_wrong + mismatches_on_device(buffer.data(), start / 4, seed);
        }
        result.copy_ms.push_back(tutorial::median(copy_ms));
        result.vmm_ms.push_back(tutorial::median(vmm_ms));
        table.add_row({format_bytes(start), format_bytes(step),
                       format("%.3f", result.copy_ms.back()),
                       format("%.3f", result.vmm_ms.back())});
    }
    std::printf("\nGrowing by one granule at different sizes (median of 3):\n");
    table.print();
    return result;
}

// The buffer sizes at which growing by one granule is timed. Under compute-sanitizer the small
// ones only: its initcheck tool has stopped the fill kernel with an illegal address on a 512 MiB
// VMM buffer, where memcheck finds no bad access.
std::vector<std::size_t> granule_starts(bool quick, std::size_t free_bytes, std::size_t last) {
    if (!tutorial::why_timing_not_judged().empty()) return {8 << 20, 32 << 20};
    // 2 GiB in quick mode too: at 512 MiB the copy (0.2 ms) was sometimes lost in cudaMalloc's
    // own cost, and the claim below failed once (1.17x) on an H100.
    if (quick) return {8 << 20, std::min<std::size_t>(std::size_t{2} << 30, free_bytes / 4)};
    return {64 << 20, 512 << 20, last / 2};
}

// The section's claims: the cost of growing by one granule at the smallest and largest start,
// the peaks of the last doubling (`doubled` bytes), and the memory taken by the last move.
void claim_lessons(tutorial::Context& ctx, const std::vector<std::size_t>& starts,
                   const GranuleSteps& granule, std::size_t classic_peak, std::size_t vmm_peak,
                   double doubled, const Moved& moved) {
    const std::string small = format_bytes(starts.front());
    const std::string large = format_bytes(starts.back());
    ctx.claim(tutorial::at_least(
        format("growing by one granule by copying costs more at %s than at %s", large.c_str(),
               small.c_str()),
        granule.copy_ms.back() / granule.copy_ms.front(), 2.0, "x",
        "the copy was too small to matter next to cudaMalloc's own cost (try a larger size)"));
    ctx.claim(tutorial::at_least(
        format("at %s, growing by one granule with VMM is several times cheaper than by copying "
               "(copy time / VMM time)",
               large.c_str()),
        granule.copy_ms.back() / granule.vmm_ms.back(), 2.0, "x",
        "mapping the new chunk waited for something that grows with the buffer: was the "
        "reservation too small, so that every chunk was remapped?"));
    // The memory claims are ratios of bytes, read from cudaMemGetInfo (the OS's count of free
    // memory): not timings, but compute-sanitizer takes device memory of its own, so they are not
    // judged under it either.
    const std::string sanitizer = tutorial::why_timing_not_judged();
    ctx.claim(tutorial::documented(
                  "doubling by copying holds old and new buffer at once (peak / new size >= 1.4)",
                  classic_peak / doubled >= 1.4, format("%.2fx", classic_peak / doubled),
                  "the old buffer was freed before the new one was counted",
                  "Runtime API reference: cudaMalloc"),
              sanitizer);
    ctx.claim(tutorial::observed(
                  "doubling with VMM needs no more than the buffer itself (peak / new size <= 1.1)",
                  vmm_peak / doubled <= 1.1, format("%.2fx", vmm_peak / doubled),
                  "no entry says how much device memory the driver's own books for a mapping "
                  "take"),
              sanitizer);
    const double twice = static_cast<double>(moved.taken) / std::max<std::size_t>(moved.bytes, 1);
    ctx.claim(tutorial::observed(
                  "mapping the same physical chunks at a second range takes no memory (memory "
                  "taken while mapped twice / the buffer's size <= 0.1)",
                  twice <= 0.1, format("%.2fx", twice),
                  "a mapping creates no physical memory (the Guide, E.5), but no entry says "
                  "what the driver's own books for it take"),
              moved.bytes == 0 ? "the buffer never outgrew its reservation" : sanitizer);
}

}  // namespace

tutorial::Result run_growable(tutorial::Context& ctx) {
    if (!tutorial::vmm_supported(ctx.device)) {
        return ctx.skip("VMM is not supported on this device");
    }
    const std::size_t first = 2 << 20;
    std::size_t last = ctx.quick() ? (64 << 20) : (std::size_t{4} << 30);
    std::size_t free_bytes = 0;
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    while (last > first && 3 * (last / 2) > free_bytes / 2) last /= 2;  // the copy needs 1.5x
    const std::size_t reservation = ctx.quick() ? (16 << 20) : (std::size_t{1} << 30);
    std::vector<std::size_t> sizes;
    for (std::size_t s = first; s <= last; s *= 2) sizes.push_back(s);
    std::printf(
        "Growing a device buffer by doubling, %s to %s. After every step the old contents are\n"
        "checked and the whole buffer is refilled (untimed). Host timer around each grow step,\n"
        "synchronized; device memory in use from cudaMemGetInfo, above what was in use before.\n"
        "The VMM buffer starts with %s of reserved addresses.\n\n",
        format_bytes(first).c_str(), format_bytes(last).c_str(), format_bytes(reservation).c_str());
    const std::vector<Step> classic = grow_by_copying(sizes);
    Moved moved;
    const std::vector<Step> vmm = grow_in_place(ctx.device, sizes, reservation, moved);

    tutorial::Table table({{"grow to", Align::right},
                           {"cudaMalloc+copy ms", Align::right},
                           {"peak in use", Align::right},
                           {"VMM ms", Align::right},
                           {"peak in use", Align::right},
                           {"VMM step"}});
    table.named("grow");
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        wrong += classic[i].survived_wrong + vmm[i].survived_wrong;
        table.add_row({format_bytes(sizes[i]), format("%.3f", classic[i].ms),
                       format_bytes(classic[i].peak), format("%.3f", vmm[i].ms),
                       format_bytes(vmm[i].peak),
                       vmm[i].moved ? "new reservation, chunks remapped" : "one chunk mapped"});
    }
    table.print();
    const std::vector<std::size_t> starts = granule_starts(ctx.quick(), free_bytes, last);
    const GranuleSteps granule = grow_by_one_granule(ctx.device, starts);
    wrong += granule.wrong;
    std::printf(
        "\nThe classic step copies everything it has so far, so its time grows with the size, and\n"
        "for a moment it holds the old and the new buffer: 1.5 times the new size when doubling.\n"
        "The VMM step only creates and maps the new chunk, so its cost follows the size of the\n"
        "growth, not of the buffer, and its peak is the buffer itself. Even when the reserved\n"
        "range runs out, moving to a bigger one remaps the existing chunks without copying.\n\n");
    claim_lessons(ctx, starts, granule, classic.back().peak, vmm.back().peak,
                  static_cast<double>(sizes.back()), moved);
    return ctx.verdict(wrong == 0, format("after every one of the %zu grow steps of each kind, the "
                                          "old contents were intact",
                                          sizes.size() + granule.steps));
}

TUTORIAL_SECTION(growable, run_growable);
