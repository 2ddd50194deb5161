// Section striped (2 or more GPUs): one range of addresses, each chunk's memory on another GPU.
// Built alone, from the course's folder (mkdir -p build first), then ./build/striped:
//   nvcc -std=c++17 -I. 06_vmm/striped.cu common/standalone.cu -o build/striped
//   (or in 06_vmm/: nvcc -std=c++17 -I.. striped.cu ../common/standalone.cu -o ../build/striped)
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"
#include "common/vmm.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

// One range of addresses whose chunks live on different GPUs: to kernels, one buffer.
struct Stripe {
    CUdeviceptr address = 0;
    std::size_t chunk = 0;  // bytes per GPU
    int gpus = 0;
    std::uint32_t* data() const { return reinterpret_cast<std::uint32_t*>(address); }
    std::size_t count() const { return chunk * gpus / sizeof(std::uint32_t); }
};

// The range made and given back (their code follows the walkthrough).
Stripe make_stripe(int gpus, std::size_t wanted_chunk);  // chunk g on GPU g, all GPUs granted
void free_stripe(const Stripe& s);                       // chunk by chunk, then the addresses

// The addresses say nothing about where the bytes are: cudaPointerGetAttributes names the
// device whose memory is behind an address (-1 if it is not device memory).
int owner_of(CUdeviceptr address) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, reinterpret_cast<void*>(address)));
    return attributes.type == cudaMemoryTypeDevice ? attributes.device : -1;
}

// What the walkthrough found.
struct Found {
    std::size_t chunk = 0;           // bytes per GPU
    std::vector<int> first, last;    // cudaPointerGetAttributes' device for each chunk's bytes
    std::vector<std::size_t> wrong;  // per writer: values the next GPU found not as written
};

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step own_chunk{"a kernel writes its own GPU's chunk"};
constexpr tutorial::Step peer_chunk{"a kernel writes the next GPU's chunk"};
constexpr tutorial::Step whole_range{"a kernel writes the whole range"};

Found walkthrough(int gpus, std::size_t wanted_chunk) {
    Found found;
    // 1. One range, chunk g on GPU g, every GPU granted the whole range.
    const Stripe s = make_stripe(gpus, wanted_chunk);
    found.chunk = s.chunk;
    const std::size_t per_chunk = s.chunk / sizeof(std::uint32_t);
    // 2. Where each chunk's bytes live, first and last.
    for (int g = 0; g < gpus; ++g) {
        found.first.push_back(owner_of(s.address + g * s.chunk));
        found.last.push_back(owner_of(s.address + (g + 1) * s.chunk - 1));
    }
    // 3. Every GPU in turn: a kernel writes its own chunk, then the next GPU's, then the whole
    //    range, which a kernel on the next GPU checks.
    for (int writer = 0; writer < gpus; ++writer) {
        const int next = (writer + 1) % gpus;
        CUDA_CHECK(cudaSetDevice(writer));
        {
            const tutorial::During during(own_chunk);
            fill_on_device_async(s.data() + writer * per_chunk, per_chunk, 53, nullptr);
        }
        {
            const tutorial::During during(peer_chunk);
            fill_on_device_async(s.data() + next * per_chunk, per_chunk, 53, nullptr);
        }
        {
            const tutorial::During during(whole_range);
            fill_on_device_async(s.data(), s.count(), 53 + writer, nullptr);
        }
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaSetDevice(next));
        found.wrong.push_back(mismatches_on_device(s.data(), s.count(), 53 + writer));
    }
    // 4. Torn down, chunk by chunk.
    free_stripe(s);
    return found;
}

// Reserves one range, maps chunk g to memory created on GPU g, then grants every GPU
// read-write access to the whole range with a single cuMemSetAccess.
Stripe make_stripe(int gpus, std::size_t wanted_chunk) {
    static const auto cuMemAddressReserve = DRIVER_FUNCTION(cuMemAddressReserve);
    static const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    static const auto cuMemMap = DRIVER_FUNCTION(cuMemMap);
    static const auto cuMemSetAccess = DRIVER_FUNCTION(cuMemSetAccess);
    Stripe s;
    s.gpus = gpus;
    std::size_t granularity = 0;
    for (int g = 0; g < gpus; ++g) {
        const std::size_t of_g = tutorial::vmm_granularity(tutorial::vmm_properties(g));
        if (of_g > granularity) granularity = of_g;  // a multiple of each, all powers of two
    }
    s.chunk = tutorial::round_up(wanted_chunk, granularity);
    CU_CHECK(cuMemAddressReserve(&s.address, s.chunk * gpus, 0, 0, 0));
    for (int g = 0; g < gpus; ++g) {
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = g;  // this chunk's memory is on GPU g
        CUmemGenericAllocationHandle memory = 0;
        CU_CHECK(cuMemCreate(&memory, s.chunk, &prop, 0));
        CU_CHECK(cuMemMap(s.address + g * s.chunk, s.chunk, 0, memory, 0));
        tutorial::vmm_release(memory);  // the mapping keeps it
    }
    std::vector<CUmemAccessDesc> access(gpus);
    for (int g = 0; g < gpus; ++g) {
        access[g].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access[g].location.id = g;
        access[g].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    CU_CHECK(cuMemSetAccess(s.address, s.chunk * gpus, access.data(), access.size()));
    return s;
}

// Each chunk was mapped on its own, so each is unmapped on its own; then the range goes
// back.
void free_stripe(const Stripe& s) {
    static const auto cuMemUnmap = DRIVER_FUNCTION(cuMemUnmap);
    static const auto cuMemAddressFree = DRIVER_FUNCTION(cuMemAddressFree);
    for (int g = 0; g < s.gpus; ++g) CU_CHECK(cuMemUnmap(s.address + g * s.chunk, s.chunk));
    CU_CHECK(cuMemAddressFree(s.address, s.chunk * s.gpus));
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    int gpus = 0;
    CUDA_CHECK(cudaGetDeviceCount(&gpus));
    if (gpus < 2) {
        std::printf(
            "SKIP: striped: one range over several GPUs needs 2 of them; this machine has %d\n",
            gpus);
        return 77;  // as the course says a missing GPU
    }
    const std::size_t chunk = std::size_t{256} << 20;  // per GPU
    walkthrough(gpus, chunk);   // the first run loads the kernels on every GPU: not timed
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(gpus, chunk);
    times.print();
    // The card's number: the slowest writer's time for the next GPU's chunk against its own
    // (GPU ms, events around each kernel; GB = 1e9 bytes).
    const std::vector<double> own = times.ms(own_chunk);
    const std::vector<double> peer = times.ms(peer_chunk);
    int slowest = 0;
    for (int w = 1; w < gpus; ++w)
        if (peer[w] / own[w] < peer[slowest] / own[slowest]) slowest = w;
    const double gb = static_cast<double>(found.chunk) / 1e9;
    std::printf(
        "%.2f times as long for the slowest writer, GPU %d, to write the next GPU's chunk "
        "as its own (%.1f against %.1f GB/s, %zu MiB chunks)\n",
        peer[slowest] / own[slowest], slowest, gb / (peer[slowest] * 1e-3),
        gb / (own[slowest] * 1e-3), found.chunk >> 20);
    for (int g = 0; g < gpus; ++g) {
        std::printf(
            "chunk %d: first byte on GPU %d, last on GPU %d; GPU %d's writes, checked by "
            "the next GPU: %zu wrong\n",
            g, found.first[g], found.last[g], g, found.wrong[g]);
    }
    return 0;
}
#endif
