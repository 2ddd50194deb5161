// Section `growable`: "realloc" for device memory. A VMM buffer reserves a large range of
// addresses once and maps more physical memory at its end as it grows, copying nothing; the
// classic way allocates a bigger buffer, copies, and frees the old one.
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/report.hpp"
#include "common/timing.hpp"
#include "common/vmm.hpp"
#include "sections.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

using namespace tutorial;

namespace {

std::size_t used_device_memory() {
    std::size_t free_bytes = 0;
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return total - free_bytes;
}

// A device buffer that grows in place: its address never changes unless the reserved range
// runs out, and even then no byte is copied.
class GrowableBuffer {
public:
    GrowableBuffer(int device, std::size_t reserve)
        : device_(device), prop_(vmm_properties(device)), granularity_(vmm_granularity(device)) {
        reserved_ = round_up(reserve, granularity_);
        base_ = vmm_reserve(reserved_, 0);
    }
    ~GrowableBuffer() {
        if (size_ > 0) vmm_unmap(base_, size_);
        for (const Chunk& chunk : chunks_) vmm_release(chunk.memory);
        vmm_free(base_, reserved_);
    }
    GrowableBuffer(const GrowableBuffer&) = delete;
    GrowableBuffer& operator=(const GrowableBuffer&) = delete;

    // Returns true if the range had to be moved to a bigger reservation.
    bool grow_to(std::size_t bytes) {
        bytes = round_up(bytes, granularity_);
        if (bytes <= size_) return false;
        const bool moved = bytes > reserved_;
        if (moved) move_to_reservation(4 * bytes);
        const Chunk chunk{vmm_create(prop_, bytes - size_), bytes - size_};
        vmm_map(base_ + size_, chunk.bytes, chunk.memory);
        vmm_set_access(base_ + size_, chunk.bytes, device_);
        chunks_.push_back(chunk);
        size_ = bytes;
        return moved;
    }
    std::uint32_t* data() const { return reinterpret_cast<std::uint32_t*>(base_); }
    std::size_t chunks() const { return chunks_.size(); }

private:
    struct Chunk {
        CUmemGenericAllocationHandle memory;
        std::size_t bytes;
    };

    // A bigger range of addresses, with the same physical chunks mapped into it at the same
    // offsets: the contents come along without being copied.
    void move_to_reservation(std::size_t bytes) {
        const CUdeviceptr bigger = vmm_reserve(bytes, 0);
        std::size_t offset = 0;
        for (const Chunk& chunk : chunks_) {
            vmm_map(bigger + offset, chunk.bytes, chunk.memory);
            offset += chunk.bytes;
        }
        if (size_ > 0) {
            vmm_set_access(bigger, size_, device_);
            vmm_unmap(base_, size_);
        }
        vmm_free(base_, reserved_);
        base_ = bigger;
        reserved_ = bytes;
    }

    int device_;
    CUmemAllocationProp prop_;
    std::size_t granularity_;
    CUdeviceptr base_ = 0;
    std::size_t reserved_ = 0;
    std::size_t size_ = 0;
    std::vector<Chunk> chunks_;
};

struct Step {
    double ms;
    std::size_t peak;  // device memory in use at the step's highest point, above the baseline
    std::size_t survived_wrong;
    bool moved;
};

}  // namespace

tutorial::Result run_growable(tutorial::Context& ctx) {
    if (!vmm_supported(ctx.device)) return ctx.skip("VMM is not supported on this device");
    const std::size_t first = 2 << 20;
    std::size_t last = ctx.quick() ? (64 << 20) : (std::size_t{4} << 30);
    std::size_t free_bytes = 0;
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    while (last > first && 3 * (last / 2) > free_bytes / 2) last /= 2;  // the copy needs 1.5x
    const std::size_t initial_reservation = ctx.quick() ? (16 << 20) : (std::size_t{1} << 30);
    std::vector<std::size_t> sizes;
    for (std::size_t s = first; s <= last; s *= 2) sizes.push_back(s);
    std::printf(
        "Growing a device buffer by doubling, %s to %s. After every step the old contents are\n"
        "checked and the whole buffer is refilled (untimed). Host timer around each grow step,\n"
        "synchronized; device memory in use from cudaMemGetInfo, above what was in use before.\n"
        "The VMM buffer starts with %s of reserved addresses.\n\n",
        format_bytes(first).c_str(), format_bytes(last).c_str(),
        format_bytes(initial_reservation).c_str());

    const std::uint32_t seed = 5;
    // The classic way.
    std::vector<Step> classic;
    {
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
            classic.push_back({ms, peak, wrong, false});
        }
        CUDA_CHECK(cudaFree(buffer));
    }
    // The VMM way.
    std::vector<Step> vmm;
    {
        const std::size_t baseline = used_device_memory();
        GrowableBuffer buffer(ctx.device, initial_reservation);
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
            vmm.push_back({ms, peak, wrong, moved});
        }
        std::printf(
            "The VMM buffer ended as %zu physical chunks behind one range of addresses.\n\n",
            buffer.chunks());
    }

    Table table({{"grow to", Align::right},
                 {"cudaMalloc+copy ms", Align::right},
                 {"peak in use", Align::right},
                 {"VMM ms", Align::right},
                 {"peak in use", Align::right},
                 {"VMM step"}});
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        wrong += classic[i].survived_wrong + vmm[i].survived_wrong;
        table.add_row({format_bytes(sizes[i]), format("%.3f", classic[i].ms),
                       format_bytes(classic[i].peak), format("%.3f", vmm[i].ms),
                       format_bytes(vmm[i].peak),
                       vmm[i].moved ? "new reservation, chunks remapped" : "one chunk mapped"});
    }
    table.print();

    // The cost of growing by the same small amount at different sizes.
    const std::size_t step = vmm_granularity(ctx.device);
    std::vector<std::size_t> starts = ctx.quick()
                                          ? std::vector<std::size_t>{8 << 20, 32 << 20}
                                          : std::vector<std::size_t>{64 << 20, 512 << 20, last / 2};
    Table small({{"buffer size", Align::right},
                 {"grow by", Align::right},
                 {"cudaMalloc+copy ms", Align::right},
                 {"VMM ms", Align::right}});
    for (std::size_t start : starts) {
        std::uint32_t* old_buffer = nullptr;
        CUDA_CHECK(cudaMalloc(&old_buffer, start));
        fill_on_device(old_buffer, start / 4, seed);
        HostTimer timer;
        std::uint32_t* bigger = nullptr;
        CUDA_CHECK(cudaMalloc(&bigger, start + step));
        CUDA_CHECK(cudaMemcpy(bigger, old_buffer, start, cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaFree(old_buffer));
        CUDA_CHECK(cudaDeviceSynchronize());
        const double classic_ms = timer.elapsed_ms();
        wrong += mismatches_on_device(bigger, start / 4, seed);
        CUDA_CHECK(cudaFree(bigger));

        GrowableBuffer buffer(ctx.device, 2 * start);
        buffer.grow_to(start);
        fill_on_device(buffer.data(), start / 4, seed);
        timer.restart();
        buffer.grow_to(start + step);
        CUDA_CHECK(cudaDeviceSynchronize());
        const double vmm_ms = timer.elapsed_ms();
        wrong += mismatches_on_device(buffer.data(), start / 4, seed);
        small.add_row({format_bytes(start), format_bytes(step), format("%.3f", classic_ms),
                       format("%.3f", vmm_ms)});
    }
    std::printf("\nGrowing by one granule at different sizes:\n");
    small.print();
    std::printf(
        "\nThe classic step copies everything it has so far, so its time grows with the size, and\n"
        "for a moment it holds the old and the new buffer: 1.5 times the new size when doubling.\n"
        "The VMM step only creates and maps the new chunk, so its cost follows the size of the\n"
        "growth, not of the buffer, and its peak is the buffer itself. Even when the reserved\n"
        "range runs out, moving to a bigger one remaps the existing chunks without copying.\n");
    return ctx.verdict(wrong == 0, format("after every one of the %zu grow steps of each kind, the "
                                          "old contents were intact",
                                          2 * (sizes.size() + starts.size())));
}
