// Section growable: "realloc" for device memory, copying (cudaMalloc) and in place (VMM).
//   nvcc -std=c++17 -I. 06_vmm/growable.cu common/standalone.cu -o build/growable
//   (or in 06_vmm/: nvcc -std=c++17 -I.. growable.cu ../common/standalone.cu -o ../build/growable)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

std::size_t round_up(std::size_t bytes, std::size_t multiple) {
    return (bytes + multiple - 1) / multiple * multiple;
}

// A device buffer that grows in place: its address never changes unless the reserved range
// runs out, and even then no byte is copied. (The driver functions are looked up through the
// runtime the first time each is needed; see common/driver.hpp.) Its code follows the
// walkthrough.
class GrowableBuffer {
public:
    GrowableBuffer(int device, std::size_t reserve);  // addresses only: reserved, nothing mapped
    ~GrowableBuffer();  // every chunk's mapping and handle, then the addresses
    GrowableBuffer(const GrowableBuffer&) = delete;
    GrowableBuffer& operator=(const GrowableBuffer&) = delete;

    // Creates the missing physical memory and maps it right after the part already mapped.
    // Returns true if the range had to move to a bigger reservation first (map_again, move_to).
    bool grow_to(std::size_t bytes);

    std::uint32_t* data() const { return reinterpret_cast<std::uint32_t*>(base_); }
    std::size_t chunks() const { return chunks_.size(); }

private:
    struct Chunk {
        CUmemGenericAllocationHandle memory;
        std::size_t bytes;
    };
    struct Range {
        CUdeviceptr address;
        std::size_t bytes;
    };

    bool fits(std::size_t bytes) const { return round_up(bytes, granularity_) <= reserved_; }
    Range map_again(std::size_t bytes);  // a bigger reservation, the chunks mapped there too
    void move_to(const Range& bigger);   // ...access granted there, the old range given back

    CUmemAllocationProp prop_{};
    CUmemAccessDesc access_{};
    std::size_t granularity_ = 0;
    CUdeviceptr base_ = 0;
    std::size_t reserved_ = 0;
    std::size_t size_ = 0;
    std::vector<Chunk> chunks_;
};

// What the walkthrough found.
struct Found {
    std::size_t wrong = 0;   // values a growth lost, both ways, at every size (0 when right)
    int moves = 0;           // times the VMM buffer outgrew its reservation
    std::size_t chunks = 0;  // physical chunks behind the VMM buffer at its largest
};

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step malloc_copy{"growing by copying: a bigger cudaMalloc, all of it copied"};
constexpr tutorial::Step free_old{"growing by copying: the old buffer freed"};
constexpr tutorial::Step grow_in_place{"growing in place: the new part mapped behind the rest"};

// Grows a device buffer through `sizes` (growing multiples of the granularity) both ways, the
// classic way first. After each growth the old contents are checked, then the buffer refilled.
Found walkthrough(int device, const std::vector<std::size_t>& sizes, std::size_t reservation) {
    constexpr std::uint32_t seed = 5;
    Found found;
    // 1. The classic way: a bigger cudaMalloc, a copy of everything so far, a cudaFree of the
    //    old buffer. For a moment both exist; every pointer into the old one goes stale.
    std::uint32_t* buffer = nullptr;
    std::size_t size = 0;
    for (const std::size_t bytes : sizes) {
        std::uint32_t* bigger = nullptr;
        {
            const tutorial::During during(malloc_copy);
            CUDA_CHECK(cudaMalloc(&bigger, bytes));
            if (size > 0) CUDA_CHECK(cudaMemcpy(bigger, buffer, size, cudaMemcpyDeviceToDevice));
        }
        {
            const tutorial::During during(free_old);
            CUDA_CHECK(cudaFree(buffer));  // the first time a null pointer: cudaFree does nothing
        }
        buffer = bigger;
        found.wrong += mismatches_on_device(buffer, size / sizeof *buffer, seed);
        size = bytes;
        fill_on_device(buffer, size / sizeof *buffer, seed);
    }
    CUDA_CHECK(cudaFree(buffer));

    // 2. The VMM way: addresses reserved once, each growth maps a new chunk behind the last.
    //    The pointer stays valid (unless the reservation runs out) and nothing is copied.
    GrowableBuffer grown(device, reservation);
    size = 0;
    for (const std::size_t bytes : sizes) {
        {
            const tutorial::During during(grow_in_place);
            found.moves += grown.grow_to(bytes) ? 1 : 0;
        }
        found.wrong += mismatches_on_device(grown.data(), size / sizeof(std::uint32_t), seed);
        size = bytes;
        fill_on_device(grown.data(), size / sizeof(std::uint32_t), seed);
    }
    found.chunks = grown.chunks();
    return found;  // 3. the destructor unmaps and releases every chunk, then frees the addresses
}

// Addresses only: reserve the range, map nothing yet.
GrowableBuffer::GrowableBuffer(int device, std::size_t reserve) {
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

// Tear down: every chunk's mapping and handle, then the addresses.
GrowableBuffer::~GrowableBuffer() {
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

// A growth: only the missing bytes are created, mapped right after the rest and granted.
bool GrowableBuffer::grow_to(std::size_t bytes) {
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

// The reservation ran out: a bigger range of addresses (room to grow to 4 x `bytes`), with the
// same physical chunks mapped into it at the same offsets. The contents come along without being
// copied; for now the chunks are mapped at both ranges.
GrowableBuffer::Range GrowableBuffer::map_again(std::size_t bytes) {
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

// Access for the new range (a mapping grants none), then the old range goes.
void GrowableBuffer::move_to(const Range& bigger) {
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

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    // 2 MiB to 256 MiB by doubling, then 2 MiB more, from 16 MiB of reserved addresses.
    std::vector<std::size_t> sizes;
    for (std::size_t bytes = std::size_t{2} << 20; bytes <= (std::size_t{256} << 20); bytes *= 2)
        sizes.push_back(bytes);
    sizes.push_back(sizes.back() + (std::size_t{2} << 20));
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(0, sizes, std::size_t{16} << 20);
    times.print();
    // The card's number: growing by one granule, at the second size and at the last; the copying
    // way's time is its cudaMalloc and copy and its cudaFree (GPU ms, events around each step).
    const std::vector<double> copied = times.ms(malloc_copy);
    const std::vector<double> freed = times.ms(free_old);
    const std::vector<double> grown = times.ms(grow_in_place);
    const std::size_t last = sizes.size() - 1;
    const double copy_last_ms = copied[last] + freed[last];
    std::printf(
        "growing by one granule by copying took %.1f times as long at %zu MiB as at %zu "
        "MiB, where VMM was %.1f times cheaper at %zu MiB\n",
        copy_last_ms / (copied[1] + freed[1]), sizes[last - 1] >> 20, sizes[0] >> 20,
        copy_last_ms / grown[last], sizes[last - 1] >> 20);
    std::printf(
        "grew to %zu MiB both ways: %zu values lost; the VMM buffer moved to a bigger "
        "reservation %d times and ended as %zu chunks\n",
        sizes.back() >> 20, found.wrong, found.moves, found.chunks);
    return found.wrong == 0 ? 0 : 1;
}
#endif
