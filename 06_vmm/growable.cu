// Section growable: "realloc" for device memory. A VMM buffer reserves a large range of addresses
// once and maps more physical memory at its end as it grows, copying nothing. (checks/growable.cu
// grows it and a cudaMalloc buffer side by side, timing each step and reading the memory in use.)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/vmm.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

using tutorial::round_up;

// A device buffer that grows in place: its address never changes unless the reserved range
// runs out, and even then no byte is copied. (The driver functions are looked up through the
// runtime the first time each is needed; see common/driver.hpp.)
class GrowableBuffer {
public:
    // Step 1. Addresses only: reserve the range, map nothing yet.
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
    // Step 5. Tear down: every chunk's mapping and handle, then the addresses.
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

    // Step 2. Creates the missing physical memory and maps it right after the part already
    // mapped. Returns true if the range had to be moved to a bigger reservation first (step 3).
    bool grow_to(std::size_t bytes) {
        static const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
        static const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
        static const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
        bytes = round_up(bytes, granularity_);
        if (bytes <= size_) return false;
        const bool moved = !fits(bytes);
        if (moved) move_to(map_again(bytes));
        Chunk chunk{0, bytes - size_};
        CU_CHECK(cuMemCreate(&chunk.memory, chunk.bytes, &prop_, 0));
        CU_CHECK(cuMemMap(base_ + size_, chunk.bytes, 0, chunk.memory, 0));
        CU_CHECK(cuMemSetAccess(base_ + size_, chunk.bytes, &access_, 1));  // the new part only
        chunks_.push_back(chunk);
        size_ = bytes;
        return moved;
    }
    bool fits(std::size_t bytes) const { return round_up(bytes, granularity_) <= reserved_; }

    // Step 3. The reservation ran out: a bigger range of addresses (room to grow to 4 x `bytes`),
    // with the same physical chunks mapped into it at the same offsets. The contents come along
    // without being copied; for now the chunks are mapped at both ranges.
    struct Range {
        CUdeviceptr address;
        std::size_t bytes;
    };
    Range map_again(std::size_t bytes) {
        static const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
        static const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
        Range bigger{0, 4 * round_up(bytes, granularity_)};
        CU_CHECK(cuMemAddressReserve(&bigger.address, bigger.bytes, 0, 0, 0));
        std::size_t offset = 0;
        for (const Chunk& chunk : chunks_) {
            CU_CHECK(cuMemMap(bigger.address + offset, chunk.bytes, 0, chunk.memory, 0));
            offset += chunk.bytes;
        }
        return bigger;
    }

    // Step 4. Access for the new range (a mapping grants none), then the old range goes.
    void move_to(const Range& bigger) {
        static const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
        static const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
        static const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
        if (size_ > 0) CU_CHECK(cuMemSetAccess(bigger.address, size_, &access_, 1));
        std::size_t offset = 0;
        for (const Chunk& chunk : chunks_) {  // the old mappings, one whole mapping a call
            CU_CHECK(cuMemUnmap(base_ + offset, chunk.bytes));
            offset += chunk.bytes;
        }
        CU_CHECK(cuMemAddressFree(base_, reserved_));
        base_ = bigger.address;
        reserved_ = bigger.bytes;
    }

    std::uint32_t* data() const { return reinterpret_cast<std::uint32_t*>(base_); }
    std::size_t size() const { return size_; }
    std::size_t chunks() const { return chunks_.size(); }

private:
    struct Chunk {
        CUmemGenericAllocationHandle memory;
        std::size_t bytes;
    };

    CUmemAllocationProp prop_{};
    CUmemAccessDesc access_{};
    std::size_t granularity_ = 0;
    CUdeviceptr base_ = 0;
    std::size_t reserved_ = 0;
    std::size_t size_ = 0;
    std::vector<Chunk> chunks_;
};

}  // namespace
